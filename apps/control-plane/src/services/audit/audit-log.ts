import type { AuditEvent, AuditEventsTable } from '@skiff/db';
import type { Logger } from 'pino';
import { type Insertable, type Kysely, sql } from 'kysely';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import { compiledOnce } from '../shared/compiled-once.js';

export const DEFAULT_AUDIT_RETENTION_DAYS = 90;
const DAY_MS = 86_400_000;
const MAX_TARGETS = 8;
/** Events in one insert at most (one statement compiled per size up to it: ~100 kB of SQL text in all). */
const MAX_BATCH = 64;
/** An audit row's columns, in the order each row gives them. */
const COLUMNS = ['id', 'organizationId', 'userId', 'apiKeyId', 'operation', 'targets', 'targetIds', 'outcome', 'address', 'requestId', 'at'] as const;
type Row = Insertable<AuditEventsTable>;
type InsertRows = (db: Kysely<any>, values: Record<string, unknown>) => Promise<unknown[]>;

/** The ids an input names: its top-level `id` and `…Id` fields holding text. Never any other value. */
export function targetsOf(input: unknown): Record<string, string> {
  const targets: Record<string, string> = {};
  if (typeof input !== 'object' || input === null) return targets;
  for (const [field, value] of Object.entries(input)) {
    if (Object.keys(targets).length >= MAX_TARGETS) break;
    if ((field === 'id' || /^[a-zA-Z]+Id$/.test(field)) && typeof value === 'string' && value.length > 0 && value.length <= 200) {
      targets[field] = value;
    }
  }
  return targets;
}

export interface AuditRecordInput {
  principal: Principal;
  operation: string;
  input: unknown;
  outcome: 'ok' | 'forbidden';
  address: string | null;
  requestId: string;
}

export interface AuditFilters {
  userId?: string;
  apiKeyId?: string;
  operation?: string;
  targetId?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

const record = (e: AuditEvent) => ({
  auditEventId: e.id,
  organizationId: e.organizationId,
  userId: e.userId,
  apiKeyId: e.apiKeyId,
  operation: e.operation,
  targets: e.targets,
  outcome: e.outcome,
  address: e.address,
  requestId: e.requestId,
  at: iso(e.at),
});

/** A page's end: the last event's time and id, newest-first order. */
const encodeCursor = (e: AuditEvent) => Buffer.from(JSON.stringify([iso(e.at), e.id])).toString('base64url');

function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(at))) return { at: new Date(at), id };
  } catch {
    // answered below
  }
  throw Invalid('cursor', 'not a cursor this operation returned');
}

/**
 * The audit log: one row per mutating operation done or refused for permission (http/mount.ts
 * records them for every contract that is not a read). Rows older than the retention are
 * deleted in the background of a write, at most once per `pruneEveryMs` (an hour).
 */
export class AuditLog {
  private prunedAt: number | undefined;
  private pruning: Promise<void> | undefined;
  private readonly pending: { row: Row; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private writing: Promise<void> | undefined;
  /** The insert of n rows by n, built and compiled the first time a batch of n is written. */
  private readonly inserts = new Map<number, InsertRows>();

  constructor(
    private readonly deps: Pick<ServiceDeps, 'db' | 'ids' | 'clock'>,
    private readonly o: { retentionMs?: number; pruneEveryMs?: number; log: Logger },
  ) {}

  /**
   * Writes the event; resolves once it is stored. Events recorded while a write is under way
   * go together in the next one (one statement for many requests under load); a failed write
   * fails every event in it.
   */
  record(e: AuditRecordInput): Promise<void> {
    const targets = targetsOf(e.input);
    const row: Row = {
      id: this.deps.ids('aud'),
      organizationId: e.principal.organizationId,
      userId: e.principal.userId,
      apiKeyId: e.principal.apiKeyId,
      operation: e.operation,
      targets: JSON.stringify(targets),
      targetIds: JSON.stringify(Object.values(targets)),
      outcome: e.outcome,
      address: e.address,
      requestId: e.requestId,
      at: this.deps.clock(),
    };
    const stored = new Promise<void>((resolve, reject) => this.pending.push({ row, resolve, reject }));
    this.writing ??= this.write().finally(() => (this.writing = undefined));
    return stored;
  }

  private async write(): Promise<void> {
    await Promise.resolve(); // the events recorded in the same tick go in the first write
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_BATCH);
      try {
        await this.insert(batch.map((b) => b.row));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.pruneIfDue();
  }

  private insert(rows: Row[]): Promise<unknown[]> {
    let insert = this.inserts.get(rows.length);
    if (!insert) {
      const names = rows.flatMap((_, i) => COLUMNS.map((c) => `${i}.${c}`));
      insert = compiledOnce(names, (db, slot) =>
        db.insertInto('auditEvents').values(rows.map((_, i) => Object.fromEntries(COLUMNS.map((c) => [c, slot[`${i}.${c}`]])) as Row)),
      );
      this.inserts.set(rows.length, insert);
    }
    const values: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const c of COLUMNS) values[`${i}.${c}`] = row[c] ?? null;
    });
    return insert(this.deps.db, values);
  }

  async list(p: Principal, f: AuditFilters) {
    let q = this.deps.db.selectFrom('auditEvents').selectAll().where('organizationId', '=', p.organizationId);
    if (f.userId) q = q.where('userId', '=', f.userId);
    if (f.apiKeyId) q = q.where('apiKeyId', '=', f.apiKeyId);
    if (f.operation) q = q.where('operation', '=', f.operation);
    if (f.targetId) q = q.where(sql<boolean>`target_ids @> ${JSON.stringify([f.targetId])}::jsonb`);
    if (f.from) q = q.where('at', '>=', new Date(f.from));
    if (f.to) q = q.where('at', '<', new Date(f.to));
    if (f.cursor) {
      const c = decodeCursor(f.cursor);
      q = q.where((eb) => eb.or([eb('at', '<', c.at), eb.and([eb('at', '=', c.at), eb('id', '<', c.id)])]));
    }
    const limit = f.limit ?? 50;
    const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
    const page = rows.slice(0, limit);
    return { items: page.map(record), nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null };
  }

  /** Deletes the events older than the retention; how many. */
  async prune(): Promise<number> {
    const before = new Date(this.deps.clock().getTime() - (this.o.retentionMs ?? DEFAULT_AUDIT_RETENTION_DAYS * DAY_MS));
    const result = await this.deps.db.deleteFrom('auditEvents').where('at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private pruneIfDue(): void {
    const now = this.deps.clock().getTime();
    if (this.pruning || (this.prunedAt !== undefined && now - this.prunedAt < (this.o.pruneEveryMs ?? 3600_000))) return;
    this.prunedAt = now;
    this.pruning = this.prune()
      .then((deleted) => {
        if (deleted > 0) this.o.log.info({ deleted }, 'audit log: pruned old events');
      })
      .catch((err: unknown) => this.o.log.warn({ err: (err as Error).message }, 'audit log: cannot prune; trying again later'))
      .finally(() => (this.pruning = undefined));
  }

  /** Waits for the writes and a prune under way (before the database closes). */
  async settled(): Promise<void> {
    await this.writing;
    await this.pruning;
  }
}
