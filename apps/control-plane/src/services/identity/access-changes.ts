import { randomUUID } from 'node:crypto';
import { type Db, type ListenHandlers, listenerName, type NotificationListener } from '@skiff/db';
import { sql } from 'kysely';
import type { Logger } from 'pino';

/** The channel the database's triggers notify (migration 2026-12-12T03-00-access-notify). */
export const ACCESS_CHANNEL = 'skiff_access';

/** What a control plane caches about who may do what (http/authenticate.ts PrincipalCache). */
export interface AccessCache {
  clear(): void;
  setCaching(on: boolean): void;
}

export type Listen = (channel: string, handlers: ListenHandlers) => NotificationListener;

export interface Signals {
  /** Sends `payload` on the channel (outside any transaction). */
  notify(channel: string, payload: string): Promise<void>;
  /** How many sessions listen on the channel now (this process's included). */
  listeners(channel: string): Promise<number>;
}

export const accessSignals = (db: Db): Signals => ({
  notify: async (channel, payload) => void (await sql`select pg_notify(${channel}, ${payload})`.execute(db)),
  listeners: async (channel) => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = ${listenerName(channel)}`.execute(db);
    return rows[0]?.n ?? 0;
  },
});

/** A control plane's marker after its change, and the others' answers to it: no cache is dropped for either. */
const MARK = 'mark:';
const ACK = 'ack:';

interface Waiter {
  heard: boolean;
  acks: number;
  needed: number;
  done(): void;
}

/**
 * Keeps the access cache true to the database on every control plane sharing it. A change of
 * keys, memberships, a user's platform flag or an organization notifies `skiff_access` from its
 * own transaction (a trigger: whoever wrote it, delivered only on commit), and every listening
 * control plane drops its cache when it arrives. While the listener is down a notification can
 * be missed, so the cache keeps nothing then (each request reads its key) until `LISTEN` holds
 * again. Without `listen` (PGlite: one process) the local clear after each change is all.
 */
export class AccessChanges {
  private listener: NotificationListener | undefined;
  private readonly waiters = new Map<string, Waiter>();
  /** How many times `LISTEN` came to hold (1 at start, one more for each reconnection). */
  sessions = 0;

  constructor(
    private readonly cache: AccessCache,
    private readonly listen: Listen | undefined,
    private readonly signals: Signals,
    private readonly log: Logger,
    /** How long a change made here waits to hear its marker back. */
    private readonly echoTimeoutMs = 1_000,
  ) {}

  start(): void {
    if (!this.listen || this.listener) return;
    this.cache.setCaching(false);
    this.listener = this.listen(ACCESS_CHANNEL, {
      notified: (payload) => this.notified(payload),
      listening: () => {
        this.sessions++;
        this.cache.clear();
        this.cache.setCaching(true);
        this.log.info('access changes: listening; principals are cached');
      },
      lost: (err) => {
        this.cache.setCaching(false);
        this.log.warn({ err: err.message }, 'access changes: not listening; every request reads its key until the listener reconnects');
      },
    });
  }

  /**
   * After a change this process committed: its own cache goes at once. Then, while listening,
   * it sends a marker and waits (at most `echoTimeoutMs`) for it to come back and for every
   * other listening control plane to answer it. PostgreSQL delivers notifications in commit
   * order, so each of them read the change's own notification (and dropped its cache) before
   * the marker: a client told of the change finds it everywhere.
   */
  async changed(): Promise<void> {
    this.cache.clear();
    if (!this.listener?.isListening) return;
    const mark = randomUUID();
    let waiter: Waiter | undefined;
    const settled = new Promise<void>((resolve) => {
      const timer = setTimeout(() => waiter!.done(), this.echoTimeoutMs);
      waiter = {
        heard: false,
        acks: 0,
        needed: Number.POSITIVE_INFINITY,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(mark);
          resolve();
        },
      };
      this.waiters.set(mark, waiter);
    });
    try {
      waiter!.needed = (await this.signals.listeners(ACCESS_CHANNEL)) - 1;
      await this.signals.notify(ACCESS_CHANNEL, MARK + mark);
    } catch (err) {
      waiter!.done();
      this.log.warn({ err: (err as Error).message }, 'access changes: could not send the marker after a change');
    }
    await settled;
  }

  private notified(payload: string): void {
    if (payload.startsWith(MARK)) {
      const mark = payload.slice(MARK.length);
      const own = this.waiters.get(mark);
      if (own) {
        own.heard = true;
        this.check(own);
        return;
      }
      this.signals.notify(ACCESS_CHANNEL, ACK + mark).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'access changes: could not answer a marker'));
    } else if (payload.startsWith(ACK)) {
      const own = this.waiters.get(payload.slice(ACK.length));
      if (own) {
        own.acks++;
        this.check(own);
      }
    } else {
      this.cache.clear();
    }
  }

  private check(w: Waiter): void {
    if (w.heard && w.acks >= w.needed) w.done();
  }

  get isListening(): boolean {
    return this.listener?.isListening ?? false;
  }

  async close(): Promise<void> {
    await this.listener?.close();
    this.listener = undefined;
    for (const w of [...this.waiters.values()]) w.done();
  }
}
