import { JetStreamApiCodes, JetStreamApiError, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type NatsConnection, nanos } from '@nats-io/transport-node';
import type { Db } from '@skiff/db';
import { COMMAND_STREAM, COMMAND_SUBJECTS, WakeableSleep, commandSubject } from '@skiff/domain';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { CommandOutbox } from './outbox.js';

/** JetStream drops a message whose id it saw within this window (de-duplication of re-publishes). */
export const DUPLICATE_WINDOW_MS = 2 * 60_000;
/** Commands older than this are dropped from the stream (they are long past their deadline). */
const MAX_AGE_MS = 7 * 24 * 3600_000;

/**
 * Makes sure the command stream exists: created when missing (file storage, the duplicate
 * window above), left as it is when present, so both sides and several processes may call it.
 */
export async function ensureCommandStream(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const notFound = (err: unknown) => err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
  try {
    await jsm.streams.info(COMMAND_STREAM);
    return;
  } catch (err) {
    if (!notFound(err)) throw err;
  }
  try {
    await jsm.streams.add({
      name: COMMAND_STREAM,
      subjects: [COMMAND_SUBJECTS],
      storage: StorageType.File,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      max_age: nanos(MAX_AGE_MS),
    });
  } catch (err) {
    // Someone else created it in between: fine when it is there now.
    await jsm.streams.info(COMMAND_STREAM).catch(() => {
      throw err;
    });
  }
}

export interface OutboxRelayOptions {
  db: Db;
  outbox: CommandOutbox;
  /** Opens a NATS connection (called again after a failed attempt; the connection itself reconnects). */
  connect: () => Promise<NatsConnection>;
  clock: () => Date;
  log: Logger;
  /** How often the outbox is read without a notify; 2 s by default. */
  pollMs?: number;
  /** A command published this long ago without a result is published again; 5 min by default. */
  republishAfterMs?: number;
  /** Retry delays after a failure: doubling from `minMs` up to `maxMs`. */
  backoff?: { minMs: number; maxMs: number };
  /** How long one publish waits for JetStream's acknowledgement. */
  publishTimeoutMs?: number;
  batchSize?: number;
}

interface DueCommand {
  id: string;
  serverId: string;
  payload: string;
}

/**
 * Publishes the outbox to JetStream (ARCHITECTURE.md "Commands", step 2): pending commands
 * in creation order to `agent.<serverId>.cmd`, with the command id as message id, then
 * marks them published. Commands published long ago and still without a result are
 * published again until their deadline (JetStream drops repeats within its duplicate
 * window; agents drop repeats by their journal). Runs at start, on every notify (the outbox
 * notifies it when commands were committed) and on a poll; a failure (NATS down, stream
 * missing) is logged and retried with backoff, and stops the pass so that no later command
 * overtakes an earlier one.
 */
export class OutboxRelay {
  private nc: NatsConnection | undefined;
  private streamReady = false;
  private loopDone: Promise<void> | undefined;
  private stopped = false;
  /** A command was committed since the loop last looked. */
  private notified = false;
  /** Whether the current sleep ends on a notify (not while backing off after a failure). */
  private wakeable = false;
  private readonly sleeper = new WakeableSleep();
  private readonly pollMs: number;
  private readonly republishAfterMs: number;
  private readonly backoff: { minMs: number; maxMs: number };
  private readonly batchSize: number;
  private readonly unsubscribe: () => void;

  constructor(private readonly o: OutboxRelayOptions) {
    // Whatever the outbox queues wakes the relay (until it stops).
    this.unsubscribe = o.outbox.subscribe(() => this.notify());
    this.pollMs = o.pollMs ?? 2000;
    this.republishAfterMs = o.republishAfterMs ?? 5 * 60_000;
    this.backoff = o.backoff ?? { minMs: 500, maxMs: 30_000 };
    this.batchSize = o.batchSize ?? 100;
  }

  start(): void {
    if (this.loopDone || this.stopped) return;
    this.loopDone = this.loop();
  }

  /** A command was committed: publish without waiting for the poll. */
  notify(): void {
    this.notified = true;
    if (this.wakeable) this.sleeper.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    this.sleeper.wake();
    await this.loopDone;
    const nc = this.nc;
    this.nc = undefined;
    await nc?.close().catch(() => {});
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let delay = this.pollMs;
      let wakeable = true;
      try {
        const more = await this.pass();
        if (failures > 0) this.o.log.info('outbox relay: publishing again');
        failures = 0;
        if (more) delay = 0;
      } catch (err) {
        failures += 1;
        wakeable = false;
        delay = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** Math.min(failures - 1, 20));
        this.streamReady = false;
        this.o.log.warn({ err: messageOf(err), failures, retryInMs: delay }, 'outbox relay: cannot publish commands; retrying');
      }
      await this.sleep(delay, wakeable);
    }
  }

  /** Publishes what is due now; true when a whole batch went out (more may be waiting). */
  async pass(): Promise<boolean> {
    // Connect (and make sure of the stream) even with nothing to send, so agents find it.
    const js = jetstream(await this.connection());
    const due = await this.due();
    if (due.length === 0) return false;
    for (const c of due) {
      if (this.stopped) return false;
      // The row stays locked while it is published: a cancel of a command not sent yet
      // (deployment-control.ts) waits for it and then finds it published, or it finds the
      // command cancelled here and it is not sent.
      await this.o.db.transaction().execute(async (tx) => {
        const still = await tx
          .selectFrom('commands')
          .select('id')
          .where('id', '=', c.id)
          .where('status', 'in', ['pending', 'published'])
          .forUpdate()
          .executeTakeFirst();
        if (!still) return;
        await js.publish(commandSubject(c.serverId), this.o.outbox.open(c.payload), {
          msgID: c.id,
          timeout: this.o.publishTimeoutMs ?? 5000,
        });
        await tx
          .updateTable('commands')
          .set({ status: 'published', publishedAt: this.o.clock(), attempts: sql<number>`attempts + 1` })
          .where('id', '=', c.id)
          .execute();
      });
    }
    return due.length === this.batchSize;
  }

  private due(): Promise<DueCommand[]> {
    const now = this.o.clock();
    const stale = new Date(now.getTime() - this.republishAfterMs);
    return this.o.db
      .selectFrom('commands')
      .select(['id', 'serverId', 'payload'])
      .where((eb) =>
        eb.or([
          eb('status', '=', 'pending'),
          eb.and([eb('status', '=', 'published'), eb('publishedAt', '<', stale), eb('deadline', '>', now)]),
        ]),
      )
      .orderBy('position')
      .limit(this.batchSize)
      .execute();
  }

  /**
   * The relay's NATS connection (opened when missing, the command stream made sure of); the
   * control client sends agents' control requests over it.
   */
  connection(): Promise<NatsConnection> {
    // One opening at a time: the relay's loop and control requests may ask together.
    this.opening ??= this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private opening: Promise<NatsConnection> | undefined;

  private async open(): Promise<NatsConnection> {
    if (!this.nc || this.nc.isClosed()) {
      this.streamReady = false;
      const nc = await this.o.connect();
      if (this.stopped) {
        await nc.close().catch(() => {});
        throw new Error('relay stopped');
      }
      this.nc = nc;
      this.o.log.info({ server: nc.getServer() }, 'outbox relay: connected to NATS');
    }
    if (!this.streamReady) {
      await ensureCommandStream(this.nc);
      this.streamReady = true;
    }
    return this.nc;
  }

  private async sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.stopped) return;
    if (wakeable && this.notified) {
      this.notified = false;
      return;
    }
    this.wakeable = wakeable;
    await this.sleeper.sleep(ms);
    this.wakeable = false;
    if (wakeable) this.notified = false;
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
