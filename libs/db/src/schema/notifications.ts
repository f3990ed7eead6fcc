import type { Selectable } from 'kysely';
import type { CreatedAt, Json } from './columns.js';

export type NotificationKind = 'hook' | 'messenger' | 'community' | 'email' | 'push';

export interface NotificationsTable {
  id: string;
  organizationId: string;
  name: string;
  kind: NotificationKind;
  /** The channel record's id (`hookId`, `messengerId`, …). */
  channelId: string;
  flags: Json<Record<string, boolean>>;
  /** The channel's settings that are not secret. */
  config: Json<Record<string, unknown>>;
  /** Encrypted JSON of the channel's secret settings. */
  secrets: string;
  createdAt: CreatedAt;
}

export type Notification = Selectable<NotificationsTable>;
