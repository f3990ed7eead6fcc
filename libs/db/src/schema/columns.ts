// Column types shared by the tables of several capabilities.
import type { ColumnType, Generated } from 'kysely';

export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type Json<T> = ColumnType<T, string, string>;
/** A nullable JSON column: optional on insert. */
export type JsonOrNull<T> = ColumnType<T | null, string | null | undefined, string | null>;

/** Columns every service table shares; each kind adds its own. */
export interface ServiceColumns {
  id: string;
  environmentId: string;
  name: string;
  appName: string;
  description: string | null;
  serverId: string | null;
  /** Encrypted dotenv text. */
  env: string;
  applicationStatus: Generated<string>;
  createdAt: CreatedAt;
}

/** Swarm service-spec values, stored as given (validated by the contracts). */
type ClusterJson = JsonOrNull<unknown>;

export interface ClusterColumns {
  healthCheckCluster: ClusterJson;
  restartPolicyCluster: ClusterJson;
  placementCluster: ClusterJson;
  updateConfigCluster: ClusterJson;
  rollbackConfigCluster: ClusterJson;
  modeCluster: ClusterJson;
  labelsCluster: ClusterJson;
  networkCluster: ClusterJson;
  stopGracePeriodCluster: ClusterJson;
  endpointSpecCluster: ClusterJson;
  ulimitsCluster: ClusterJson;
}

export interface ResourceColumns {
  memoryReservation: string | null;
  memoryLimit: string | null;
  cpuReservation: string | null;
  cpuLimit: string | null;
}

/** Where a service's source comes from: a forge connection or a plain git URL. */
export interface SourceColumns {
  repository: string | null;
  owner: string | null;
  branch: string | null;
  forgeAId: string | null;
  triggerType: string | null;
  forgeBId: string | null;
  forgeBRepository: string | null;
  forgeBOwner: string | null;
  forgeBBranch: string | null;
  forgeBPathNamespace: string | null;
  forgeBProjectId: number | null;
  forgeCId: string | null;
  forgeCRepository: string | null;
  forgeCRepositorySlug: string | null;
  forgeCOwner: string | null;
  forgeCBranch: string | null;
  forgeDId: string | null;
  forgeDRepository: string | null;
  forgeDOwner: string | null;
  forgeDBranch: string | null;
  customGitUrl: string | null;
  customGitBranch: string | null;
  customGitSSHKeyId: string | null;
  enableSubmodules: boolean | null;
  autoDeploy: boolean | null;
  watchPaths: JsonOrNull<string[]>;
  /** Encrypted webhook token. */
  refreshToken: string | null;
}
