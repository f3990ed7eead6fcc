import type { ColumnType, Selectable } from 'kysely';
import type { Json } from './columns.js';

/** One mutating operation, done or refused for permission; ids only, never input values. */
export interface AuditEventsTable {
  id: string;
  organizationId: string;
  userId: string;
  apiKeyId: string;
  /** `<router>.<operation>`. */
  operation: string;
  /** The id fields of the input (`{ applicationId: 'app_…' }`). */
  targets: Json<Record<string, string>>;
  /** The same ids as a list, for the filter by target. */
  targetIds: Json<string[]>;
  outcome: 'ok' | 'forbidden';
  /** The caller's address as the control plane's socket saw it. */
  address: string | null;
  requestId: string;
  at: ColumnType<Date, Date, never>;
}

export type AuditEvent = Selectable<AuditEventsTable>;
