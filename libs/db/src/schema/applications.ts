import type { ColumnType, Generated, Selectable } from 'kysely';
import type {
  ClusterColumns,
  CreatedAt,
  JsonOrNull,
  ResourceColumns,
  ServiceColumns,
  SourceColumns,
} from './columns.js';

export interface ApplicationsTable extends ServiceColumns, ClusterColumns, ResourceColumns, SourceColumns {
  sourceType: string;
  /** Deployments queued so far (the next deploy's forceUpdate is one more); kept while deployment records are pruned. */
  deployCount: Generated<number>;
  /** Encrypted (sealed) text: previewEnv, buildArgs, previewBuildArgs; write-only: buildSecrets, previewBuildSecrets, password. */
  previewEnv: string | null;
  buildArgs: string | null;
  buildSecrets: string | null;
  previewBuildArgs: string | null;
  previewBuildSecrets: string | null;
  previewWildcard: string | null;
  previewPath: string | null;
  previewCustomCertResolver: string | null;
  previewCertificateType: string | null;
  title: string | null;
  subtitle: string | null;
  command: string | null;
  buildPath: string | null;
  forgeBBuildPath: string | null;
  forgeCBuildPath: string | null;
  forgeDBuildPath: string | null;
  username: string | null;
  password: string | null;
  containerImage: string | null;
  registryUrl: string | null;
  customGitBuildPath: string | null;
  buildType: string | null;
  containerfile: string | null;
  containerContextPath: string | null;
  containerBuildStage: string | null;
  legacyVersion: string | null;
  packTwoVersion: string | null;
  publishDirectory: string | null;
  dropBuildPath: string | null;
  icon: string | null;
  previewPort: number | null;
  previewLimit: number | null;
  previewHttps: boolean | null;
  isPreviewDeploymentsActive: boolean | null;
  previewRequireCollaboratorPermissions: boolean | null;
  rollbackActive: boolean | null;
  enabled: boolean | null;
  cleanCache: boolean | null;
  createEnvFile: boolean | null;
  isStaticSpa: boolean | null;
  previewLabels: JsonOrNull<string[]>;
  args: JsonOrNull<string[]>;
  replicas: Generated<number>;
}

/** An archive uploaded for a `drop` application; the file is `<dataDir>/archives/<id>`. */
export interface ApplicationArchivesTable {
  id: string;
  applicationId: string;
  format: 'zip' | 'tar.gz';
  /** Bytes as uploaded (int8: a string from Postgres, a number from PGlite). */
  size: ColumnType<string | number, number, never>;
  /** SHA-256 as uploaded, lowercase hex. */
  sha256: string;
  createdAt: CreatedAt;
}

/** What an application's tasks mount (migration 2026-12-05T18-00-application-mounts). */
export interface ApplicationMountsTable {
  id: string;
  applicationId: string;
  type: 'volume' | 'bind' | 'file';
  volumeName: string | null;
  hostPath: string | null;
  /** A file mount's path under the application's folder on the agent. */
  filePath: string | null;
  /** A file mount's text; sealed when `secret`. */
  content: string | null;
  secret: Generated<boolean>;
  mountPath: string;
  createdAt: CreatedAt;
}

export interface PreviewDeploymentsTable {
  id: string;
  applicationId: string;
  appName: string;
  branch: string;
  pullRequestId: string;
  pullRequestNumber: string;
  pullRequestUrl: string;
  pullRequestTitle: string;
  previewStatus: Generated<string>;
  /** The pull request's head commit the preview was last deployed at. */
  headCommit: ColumnType<string | null, string | null | undefined, string | null>;
  /** The forge's id of the comment on the pull request (edited as the preview moves). */
  commentId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The state last posted to the forge (pending, success, failure); pending until the deployment's end is told. */
  forgeState: ColumnType<string | null, string | null | undefined, string | null>;
  /** `owner/name` of the pull request's repository, as the delivery named it. */
  forgeRepository: ColumnType<string | null, string | null | undefined, string | null>;
  /** A fork's clone address (the pull request's head repository); null: the base repository. */
  forkCloneUrl: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: CreatedAt;
}

export interface SecurityEntriesTable {
  id: string;
  applicationId: string;
  username: string;
  /** bcrypt. */
  passwordHash: string;
  createdAt: CreatedAt;
}

export type DeploymentStatus = 'queued' | 'running' | 'done' | 'error' | 'cancelled';

/** One deploy of an application: its status, timestamps and the tail of its log. */
export interface DeploymentsTable {
  id: string;
  /** The workload deployed: exactly one of applicationId and composeId is set. */
  applicationId: string | null;
  composeId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The server id on the agent channel: a server record's id, or 'local' (the platform host). */
  serverId: string;
  status: ColumnType<DeploymentStatus, DeploymentStatus | undefined, DeploymentStatus>;
  title: string | null;
  description: string | null;
  /** The newest log lines, capped. */
  log: Generated<string>;
  reason: string | null;
  /** The highest event sequence applied (events at or below it are duplicates). */
  lastSequence: Generated<number>;
  /** The image an application's deployment runs (what a rollback puts back); null for compose stacks. */
  image: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set on the deployments of a preview (applicationId is then its parent application's). */
  previewDeploymentId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The commit it builds (checked out after the clone); null: the branch's head. */
  commit: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: CreatedAt;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export type Application = Selectable<ApplicationsTable>;
export type ApplicationArchive = Selectable<ApplicationArchivesTable>;
export type ApplicationMount = Selectable<ApplicationMountsTable>;
export type PreviewDeployment = Selectable<PreviewDeploymentsTable>;
export type SecurityEntry = Selectable<SecurityEntriesTable>;
export type Deployment = Selectable<DeploymentsTable>;
