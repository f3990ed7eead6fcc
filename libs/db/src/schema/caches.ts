import type { Generated, Selectable } from 'kysely';
import type { ClusterColumns, JsonOrNull, ResourceColumns, ServiceColumns } from './columns.js';

export interface CacheInstancesTable extends ServiceColumns, ClusterColumns, ResourceColumns {
  containerImage: string;
  /** Deploys queued so far (the next deploy's forceUpdate is one more). */
  deployCount: Generated<number>;
  /** Encrypted. */
  databasePassword: string;
  command: string | null;
  args: JsonOrNull<string[]>;
  externalPort: number | null;
  networkIds: JsonOrNull<string[]>;
  detachPlatformNetwork: boolean | null;
  replicas: Generated<number>;
}

export type CacheInstance = Selectable<CacheInstancesTable>;
