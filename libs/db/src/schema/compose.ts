import type { ColumnType, Selectable } from 'kysely';
import type { ServiceColumns, SourceColumns } from './columns.js';

export interface ComposeStacksTable extends ServiceColumns, SourceColumns {
  sourceType: string;
  composeType: string;
  composeFile: string;
  composePath: string | null;
  command: string | null;
  suffix: string | null;
  randomize: boolean | null;
  isolatedDeployment: boolean | null;
  isolatedDeploymentsVolume: boolean | null;
  /** Sealed JSON `[{filePath, content}]`: files written beside the compose file at each deploy; null: none. */
  configFiles: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON `[{first, last, protocol}]`: the host ports the file published at its last deploy, as the agent reported them; null: none reported. */
  deployedHostPorts: ColumnType<string | null, string | null | undefined, string | null>;
}

export type ComposeStack = Selectable<ComposeStacksTable>;
