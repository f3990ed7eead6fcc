import type { Generated, Selectable } from 'kysely';
import type { ClusterColumns, JsonOrNull, ResourceColumns, ServiceColumns } from './columns.js';

/** The engines a database service runs (the routers dbA..dbE, in that order). */
export type DatabaseEngine = 'postgres' | 'mariadb' | 'mysql' | 'mongo' | 'libsql';

export interface DatabaseServicesTable extends ServiceColumns, ClusterColumns, ResourceColumns {
  engine: DatabaseEngine;
  containerImage: string;
  /** null for engines without one (libSQL). */
  databaseName: string | null;
  databaseUser: string | null;
  /** Encrypted. */
  databasePassword: string;
  /** Encrypted; MariaDB and MySQL only. */
  rootPassword: string | null;
  /** MongoDB only: run as a one-member replica set. */
  replicaSet: Generated<boolean>;
  /** Deploys queued so far (the next deploy's forceUpdate is one more). */
  deployCount: Generated<number>;
  command: string | null;
  args: JsonOrNull<string[]>;
  externalPort: number | null;
  networkIds: JsonOrNull<string[]>;
  detachPlatformNetwork: boolean | null;
  replicas: Generated<number>;
}

export type DatabaseService = Selectable<DatabaseServicesTable>;
