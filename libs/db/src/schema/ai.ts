import type { Selectable } from 'kysely';
import type { CreatedAt } from './columns.js';

export interface AiConfigsTable {
  id: string;
  organizationId: string;
  name: string;
  apiUrl: string;
  /** Encrypted; never returned. */
  apiKey: string;
  model: string;
  isEnabled: boolean;
  createdAt: CreatedAt;
}

export type AiConfig = Selectable<AiConfigsTable>;
