import type { Selectable } from 'kysely';
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
}

export type ComposeStack = Selectable<ComposeStacksTable>;
