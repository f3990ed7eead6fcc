import { randomUUID } from 'node:crypto';
import type { ListenHandlers, NotificationListener } from '@skiff/db';
import type { Logger } from 'pino';

/** The channel the database's triggers notify (migration 2026-12-12T03-00-access-notify). */
export const ACCESS_CHANNEL = 'skiff_access';

/** What a control plane caches about who may do what (http/authenticate.ts PrincipalCache). */
export interface AccessCache {
  clear(): void;
  setCaching(on: boolean): void;
}

export type Listen = (channel: string, handlers: ListenHandlers) => NotificationListener;

/** Sends `payload` on the channel (outside any transaction). */
export type Notify = (channel: string, payload: string) => Promise<void>;

/** The payload of a process's own marker: other control planes keep their cache for it. */
const MARK = 'mark:';

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
  private readonly waiters = new Map<string, () => void>();
  /** How many times `LISTEN` came to hold (1 at start, one more for each reconnection). */
  sessions = 0;

  constructor(
    private readonly cache: AccessCache,
    private readonly listen: Listen | undefined,
    private readonly notify: Notify,
    private readonly log: Logger,
    /** How long a change made here waits to hear its marker back. */
    private readonly echoTimeoutMs = 1_000,
  ) {}

  start(): void {
    if (!this.listen || this.listener) return;
    this.cache.setCaching(false);
    this.listener = this.listen(ACCESS_CHANNEL, {
      notified: (payload) => {
        if (payload.startsWith(MARK)) this.waiters.get(payload)?.();
        else this.cache.clear();
      },
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
   * it sends a marker and waits (briefly) to hear it back: PostgreSQL delivers notifications
   * in commit order, so the change's own notification reached every listening control plane
   * before the marker did, and a client told of the change finds it everywhere.
   */
  async changed(): Promise<void> {
    this.cache.clear();
    if (!this.listener?.isListening) return;
    const mark = `${MARK}${randomUUID()}`;
    const heard = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(mark);
        resolve();
      };
      const timer = setTimeout(done, this.echoTimeoutMs);
      this.waiters.set(mark, done);
    });
    try {
      await this.notify(ACCESS_CHANNEL, mark);
    } catch (err) {
      this.waiters.get(mark)?.();
      this.log.warn({ err: (err as Error).message }, 'access changes: could not send the marker after a change');
    }
    await heard;
    // Whatever else arrived with the marker (another control plane's socket in this process, in tests) is read first.
    await new Promise((resolve) => setImmediate(resolve));
  }

  get isListening(): boolean {
    return this.listener?.isListening ?? false;
  }

  async close(): Promise<void> {
    await this.listener?.close();
    this.listener = undefined;
    for (const done of [...this.waiters.values()]) done();
  }
}
