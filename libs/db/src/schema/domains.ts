import type { ColumnType, Selectable } from 'kysely';
import type { CreatedAt, Json, JsonOrNull } from './columns.js';

export interface DomainsTable {
  id: string;
  organizationId: string;
  applicationId: string | null;
  composeId: string | null;
  previewDeploymentId: string | null;
  /** The server of the service routed to (null: the control plane's own). */
  serverId: string | null;
  host: string;
  path: string;
  port: number | null;
  https: boolean;
  certificateType: string;
  customEntrypoint: string | null;
  customCertResolver: string | null;
  serviceName: string | null;
  domainType: string;
  internalPath: string | null;
  stripPath: boolean;
  middlewares: JsonOrNull<string[]>;
  forwardAuthEnabled: boolean;
  enabled: boolean;
  createdAt: CreatedAt;
}

/** Keyed by (organization_id, id): ids are unique within an organization. */
export interface CertificatesTable {
  id: string;
  organizationId: string;
  serverId: string | null;
  name: string;
  certificateData: string;
  /** Encrypted; never returned. */
  privateKey: string;
  certificatePath: string;
  autoRenew: boolean | null;
  subject: string;
  issuer: string;
  subjectNames: Json<string[]>;
  notBefore: Date;
  expiresAt: Date;
  fingerprint: string;
  createdAt: CreatedAt;
}

/** The revision of a server's proxy configuration (ApplyProxyConfig.revision). */
export interface ProxyRevisionsTable {
  /** The wire server id (`local` for the platform host). */
  serverId: string;
  /** int8: a string from Postgres, a number from PGlite. */
  revision: ColumnType<string | number, number, number>;
}

export type Domain = Selectable<DomainsTable>;
export type Certificate = Selectable<CertificatesTable>;
