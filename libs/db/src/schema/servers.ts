import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt } from './columns.js';

export interface ServersTable {
  id: string;
  organizationId: string;
  name: string;
  address: string;
  description: string | null;
  status: Generated<string>;
  createdAt: CreatedAt;
  /** SHA-256 (hex) of the agent's credential; null until the agent joins. */
  credentialHash: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 (hex) of the unused one-time join token, and when it expires. */
  joinTokenHash: ColumnType<string | null, string | null | undefined, string | null>;
  joinTokenExpiresAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  joinedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the agent was last heard from (written at most once per heartbeat interval). */
  lastSeenAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  agentVersion: ColumnType<string | null, string | null | undefined, string | null>;
  dockerVersion: ColumnType<string | null, string | null | undefined, string | null>;
  hostname: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A removed server's credential digest: its agent is told the server was removed. */
export interface RemovedServersTable {
  credentialHash: string;
  serverId: string;
  removedAt: CreatedAt;
  /** What its agent does with what runs on the machine: 'none' | 'remove' | 'leaveRunning'. */
  workloads: ColumnType<string, string | undefined, string>;
}

export interface SshKeysTable {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  publicKey: string;
  /** Encrypted; never returned. */
  privateKey: string;
  createdAt: CreatedAt;
}

export type CommandRowStatus = 'pending' | 'published' | 'done' | 'failed';

/** The outbox: a command for a server's agent, written with the change it carries out. */
export interface CommandsTable {
  /** The Command's commandId (also the JetStream message id). */
  id: string;
  /** Creation order (identity). */
  position: ColumnType<string, never, never>;
  serverId: string;
  /** The CommandKind's name, e.g. COMMAND_KIND_DEPLOY_APPLICATION. */
  kind: string;
  workloadKey: string;
  deploymentId: string | null;
  /** The encoded Command, base64, sealed with the platform key. */
  payload: string;
  status: ColumnType<CommandRowStatus, CommandRowStatus | undefined, CommandRowStatus>;
  attempts: Generated<number>;
  deadline: Date;
  createdAt: CreatedAt;
  publishedAt: Date | null;
  finishedAt: Date | null;
  resultReason: string | null;
  /**
   * The JetStream sequence of each copy the relay published (from its PubAck; bigints, as
   * text); 0 when a publish failed after it may have stored a copy (its sequence unknown).
   */
  streamSeqs: ColumnType<string[], never, never>;
  /** Ended by the control plane before its agent could have received it. */
  neverReceived: Generated<boolean>;
}

export type Server = Selectable<ServersTable>;
export type SshKey = Selectable<SshKeysTable>;
export type CommandRow = Selectable<CommandsTable>;
