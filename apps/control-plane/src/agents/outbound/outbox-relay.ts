import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, jetstream, jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import { InvalidArgumentError, type NatsConnection, TimeoutError, headers, nanos } from '@nats-io/transport-node';
import type { Db } from '@skiff/db';
import { COMMAND_STREAM, COMMAND_STREAM_LIMITS, COMMAND_SUBJECTS, type CommandSigner, WakeableSleep, commandSubject } from '@skiff/domain';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { pruneEndedCommands } from './command-records.js';
import { recordStreamSeq } from './command-withdrawal.js';
import type { CommandOutbox } from './outbox.js';

/** JetStream drops a message whose id it saw within this window (de-duplication of re-publishes). */
export const DUPLICATE_WINDOW_MS = COMMAND_STREAM_LIMITS.duplicateWindowMs;
/** How long ended commands are kept by default (SKIFF_COMMAND_RETENTION_DAYS, 7). */
export const DEFAULT_COMMAND_RETENTION_MS = 7 * 24 * 3600_000;

const streamConfig = {
  name: COMMAND_STREAM,
  subjects: [COMMAND_SUBJECTS],
  storage: StorageType.File,
  retention: RetentionPolicy.Workqueue,
  duplicate_window: nanos(COMMAND_STREAM_LIMITS.duplicateWindowMs),
  max_age: nanos(COMMAND_STREAM_LIMITS.maxAgeMs),
  max_msg_size: COMMAND_STREAM_LIMITS.maxMessageBytes,
};

/**
 * Makes sure the command stream exists as COMMAND_STREAM_LIMITS says: created when missing,
 * its limits updated when they differ, so both sides and several processes may call it. A
 * stream of an earlier version that kept acknowledged commands (retention `limits`, which
 * NATS cannot change in place) is replaced: what it held that no agent acknowledged is
 * published again by the relay (commands without a result are re-published), and agents set
 * their consumers up again when theirs goes away.
 */
export async function ensureCommandStream(nc: NatsConnection, log?: Logger): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const notFound = (err: unknown) => err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
  let current: StreamInfo | null = null;
  try {
    current = await jsm.streams.info(COMMAND_STREAM);
  } catch (err) {
    if (!notFound(err)) throw err;
  }
  if (current && current.config.retention !== RetentionPolicy.Workqueue) {
    log?.warn({ stream: COMMAND_STREAM, messages: current.state.messages }, 'replacing the command stream by a work queue (acknowledged commands are removed); unacknowledged commands are published again');
    await jsm.streams.delete(COMMAND_STREAM);
    current = null;
  }
  if (current) {
    const c = current.config;
    if (c.max_age !== streamConfig.max_age || c.max_msg_size !== streamConfig.max_msg_size || c.duplicate_window !== streamConfig.duplicate_window) {
      await jsm.streams.update(COMMAND_STREAM, { max_age: streamConfig.max_age, max_msg_size: streamConfig.max_msg_size, duplicate_window: streamConfig.duplicate_window });
    }
    return;
  }
  try {
    await jsm.streams.add(streamConfig);
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
  /** Signs each command for its server's subject (agents run nothing else). */
  signer: CommandSigner;
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
  /**
   * Ended commands are deleted this long after they ended (pruneEndedCommands keeps what
   * later reads need), at most once per `pruneEveryMs` (1 hour), in a pass; 7 days by default.
   */
  commandRetentionMs?: number;
  pruneEveryMs?: number;
  /**
   * Ends a command NATS will never take (too big, refused by JetStream): as a result of its
   * agent would (its kind applies it: a deploy ends in error with `reason`). Called outside
   * the relay's transaction; a command that ended meanwhile is left as it is.
   */
  endUnpublishable: (command: { id: string; serverId: string }, reason: string) => Promise<void>;
}

interface DueCommand {
  id: string;
  serverId: string;
  workloadKey: string;
  status: 'pending' | 'published' | 'done' | 'failed';
  payload: string;
}

/**
 * Why a publish failed: `command`, the command itself will never be taken (ended alone);
 * `workload`, a failure of this publish that may pass (the workload waits, others go on);
 * `nats`, NATS or JetStream is away for all (the pass stops and the relay backs off).
 */
type PublishFailure = { scope: 'command'; reason: string } | { scope: 'workload'; err: unknown } | { scope: 'nats'; err: unknown };

/**
 * Publishes the outbox to JetStream (ARCHITECTURE.md "Commands", step 2): pending commands
 * in creation order to `agent.<serverId>.cmd`, with the command id as message id and the
 * control plane's signature (headers of libs/domain command-signature.ts), then marks them
 * published. Commands published long ago and still without a result are
 * published again until their deadline (JetStream drops repeats within its duplicate
 * window; agents drop repeats by their journal). Runs at start, on every notify (the outbox
 * notifies it when commands were committed) and on a poll.
 *
 * Order is kept per workload key (what the agent runs in order), not across workloads, so
 * one command never holds back the others:
 * - a command NATS will never take (over its max_payload, a JetStream refusal that is not
 *   transient) is ended alone as REJECTED with the reason (`endUnpublishable`), and the pass
 *   goes on;
 * - a failure that may pass (a timeout while NATS answers, JetStream busy) holds back the
 *   rest of that workload in this pass, and the workload backs off (doubling, `backoff`)
 *   while the others go on;
 * - NATS or JetStream away for all (connection lost, no responders, stream missing) stops
 *   the pass, and the relay retries with backoff.
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
  /** Workloads backing off after a failure that may pass: how many in a row, and until when (ms). */
  private readonly held = new Map<string, { failures: number; until: number }>();
  /** When ended commands were last pruned (the clock's ms); undefined: not yet. */
  private prunedAt: number | undefined;

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
    const nc = await this.connection();
    const js = jetstream(nc);
    await this.pruneIfDue();
    const due = await this.due();
    if (due.length === 0) return false;
    // Workloads of this pass whose earlier command did not go out: their later ones wait.
    const skipped = new Set<string>();
    for (const c of due) {
      if (this.stopped) return false;
      if (skipped.has(c.workloadKey)) continue;
      // The row stays locked while it is published: a cancel of a command not sent yet
      // (deployment-control.ts) waits for it and then finds it published, or it finds the
      // command cancelled here and it is not sent.
      const failure = await this.o.db.transaction().execute(async (tx): Promise<PublishFailure | undefined> => {
        const still = await tx
          .selectFrom('commands')
          .select('id')
          .where('id', '=', c.id)
          .where('status', 'in', ['pending', 'published'])
          .forUpdate()
          .executeTakeFirst();
        if (!still) return undefined;
        const data = this.o.outbox.open(c.payload);
        const subject = commandSubject(c.serverId);
        const signature = headers();
        for (const [name, value] of Object.entries(this.o.signer.sign(subject, data, this.o.clock()))) signature.set(name, value);
        let seq: number;
        try {
          seq = (await js.publish(subject, data, { msgID: c.id, headers: signature, timeout: this.o.publishTimeoutMs ?? 5000 })).seq;
        } catch (err) {
          const failure = await classify(err, nc, data.length, this.o.publishTimeoutMs ?? 5000);
          // A copy may be stored though its acknowledgement was lost: its sequence unknown (0).
          if (failure.scope !== 'command') await recordStreamSeq(tx, c.id, 0);
          return failure;
        }
        // Every copy's sequence (a re-publish within the duplicate window answers the first's).
        await recordStreamSeq(tx, c.id, seq);
        await tx
          .updateTable('commands')
          .set({ status: 'published', publishedAt: this.o.clock(), attempts: sql<number>`attempts + 1` })
          .where('id', '=', c.id)
          .execute();
        return undefined;
      });
      if (!failure) {
        this.held.delete(c.workloadKey);
        continue;
      }
      if (failure.scope === 'nats') throw failure.err;
      if (failure.scope === 'workload') {
        skipped.add(c.workloadKey);
        this.hold(c.workloadKey, failure.err);
        continue;
      }
      await this.endUnpublishable(c, failure.reason);
    }
    return due.length === this.batchSize;
  }

  /** Deletes the commands that ended more than commandRetentionMs ago, at most once per pruneEveryMs. */
  private async pruneIfDue(): Promise<void> {
    const now = this.o.clock().getTime();
    if (this.prunedAt !== undefined && now - this.prunedAt < (this.o.pruneEveryMs ?? 3600_000)) return;
    this.prunedAt = now;
    try {
      const deleted = await pruneEndedCommands(this.o.db, new Date(now - (this.o.commandRetentionMs ?? DEFAULT_COMMAND_RETENTION_MS)));
      if (deleted > 0) this.o.log.info({ deleted }, 'outbox relay: pruned ended commands');
    } catch (err) {
      this.o.log.warn({ err: messageOf(err) }, 'outbox relay: cannot prune ended commands; trying again later');
    }
  }

  /** A command NATS will never take: ended alone (a pending one), or left to its deadline (one it took before). */
  private async endUnpublishable(c: DueCommand, reason: string): Promise<void> {
    this.o.log.warn({ commandId: c.id, serverId: c.serverId, workloadKey: c.workloadKey, reason }, 'outbox relay: NATS refuses a command for good');
    if (c.status === 'pending') {
      await this.o.endUnpublishable({ id: c.id, serverId: c.serverId }, reason);
      return;
    }
    // Taken once already (its agent may run it): not published again until the next republish time.
    await this.o.db.updateTable('commands').set({ publishedAt: this.o.clock() }).where('id', '=', c.id).where('status', '=', 'published').execute();
  }

  /** The workload backs off after a failure that may pass: doubling from backoff.minMs up to maxMs. */
  private hold(workloadKey: string, err: unknown): void {
    const failures = (this.held.get(workloadKey)?.failures ?? 0) + 1;
    const delay = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** Math.min(failures - 1, 20));
    this.held.set(workloadKey, { failures, until: Date.now() + delay });
    this.o.log.warn({ err: messageOf(err), workloadKey, failures, retryInMs: delay }, "outbox relay: cannot publish a workload's command; retrying it");
  }

  private due(): Promise<DueCommand[]> {
    const now = this.o.clock();
    const stale = new Date(now.getTime() - this.republishAfterMs);
    // A workload backing off is left out here, so its commands do not fill the batch. Its
    // entry stays after the wait (the next failure doubles it) until a publish of it succeeds,
    // or long after its last failure (its commands ended otherwise).
    const nowMs = Date.now();
    const backingOff: string[] = [];
    for (const [key, h] of this.held) {
      if (h.until > nowMs) backingOff.push(key);
      else if (h.until < nowMs - 4 * this.backoff.maxMs) this.held.delete(key);
    }
    let q = this.o.db
      .selectFrom('commands')
      .select(['id', 'serverId', 'workloadKey', 'status', 'payload'])
      .where((eb) =>
        eb.or([
          eb('status', '=', 'pending'),
          eb.and([eb('status', '=', 'published'), eb('publishedAt', '<', stale), eb('deadline', '>', now)]),
        ]),
      );
    if (backingOff.length > 0) q = q.where('workloadKey', 'not in', backingOff);
    return q.orderBy('position').limit(this.batchSize).execute();
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
      await ensureCommandStream(this.nc, this.o.log);
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

/** JetStream API statuses of a publish that may pass: stream missing (404, made again), timeout, too many requests, server side. */
const TRANSIENT_STATUS = new Set([404, 408, 429]);

/**
 * What a failed publish of `bytes` means (see PublishFailure). Permanent: NATS's max_payload
 * exceeded (the client checks it against the server's info; the server says
 * "maximum payload exceeded"), or a JetStream API refusal of this message (a 4xx status but
 * 404, 408, 429). Away for all: the connection lost or closed, no JetStream responders, the
 * stream missing, a timeout while the server does not answer a ping either. Anything else
 * (a timeout while the server answers, a 5xx JetStream error) is a failure of this workload.
 */
export async function classify(err: unknown, nc: NatsConnection, bytes: number, timeoutMs: number): Promise<PublishFailure> {
  const message = messageOf(err);
  if ((err instanceof InvalidArgumentError && /max_payload/i.test(message)) || /max(imum)?[ _]payload/i.test(message)) {
    const max = nc.info?.max_payload;
    return { scope: 'command', reason: `NATS refuses the command: it is ${bytes} bytes, over the ${max ?? 'server'}${max ? '-byte' : ''} maximum payload (${message})` };
  }
  if (err instanceof JetStreamApiError) {
    if (err.code === JetStreamApiCodes.StreamNotFound || err.code === JetStreamApiCodes.JetStreamNotEnabledForAccount) return { scope: 'nats', err };
    if (err.status >= 400 && err.status < 500 && !TRANSIENT_STATUS.has(err.status)) {
      return { scope: 'command', reason: `JetStream refuses the command: ${message} (error ${err.code})` };
    }
    return { scope: 'workload', err };
  }
  if (err instanceof TimeoutError && !nc.isClosed()) {
    // A slow acknowledgement of this message, or NATS away: a ping tells them apart.
    const answers = await Promise.race([nc.flush().then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), Math.min(timeoutMs, 2000)).unref())]);
    return answers ? { scope: 'workload', err } : { scope: 'nats', err };
  }
  // The connection lost, closed or draining, no JetStream responders, or what is not known: as before, for all.
  return { scope: 'nats', err };
}
