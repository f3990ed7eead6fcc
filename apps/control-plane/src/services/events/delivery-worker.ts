import type { Db, EventRecord, NotificationKind } from '@skiff/db';
import { WakeableSleep } from '@skiff/domain';
import type { Logger } from 'pino';
import type { SecretBox } from '../../crypto/secret-box.js';
import { type ChannelSender, DeliveryError } from '../notifications/channels/channel-sender.js';
import { renderEvent } from './event-message.js';
import { DEFAULT_EVENT_RETENTION_DAYS, pruneEvents } from './event-retention.js';
import type { EventSignal } from './events.js';
import { TokenBucket } from './rate-limit.js';

export interface DeliveryWorkerOptions {
  db: Db;
  secrets: SecretBox;
  /** The sender of each channel kind; a kind without one keeps its deliveries pending (retried, then failed). */
  senders: Partial<Record<NotificationKind, ChannelSender>>;
  log: Logger;
  /** Wakes the worker when events were committed (otherwise it finds them at its poll). */
  signal?: EventSignal;
  clock?: () => Date;
  /** How often the queue is read without a wake; 1 s. */
  pollMs?: number;
  /** How long a claim holds a delivery: past it, a worker whose process died loses it to another; 2 min. */
  leaseMs?: number;
  /** One send's limit; 15 s. */
  sendTimeoutMs?: number;
  /** Retry delays: doubling from minMs up to maxMs (10 s … 1 h). */
  backoff?: { minMs: number; maxMs: number };
  /** A delivery still failing this long after its event is given up (failed); 24 h. */
  giveUpAfterMs?: number;
  /** Per channel: `burst` messages at once, then one per `intervalMs` (10, 1 s). */
  rate?: { burst: number; intervalMs: number };
  /** Consecutive failures after which a channel is logged as failing; 5. */
  reportAfterFailures?: number;
  /** The platform's public address, for links in messages. */
  baseUrl?: string;
  batchSize?: number;
  /** Events older than this, none of whose deliveries is pending, are deleted with their deliveries; 30 days. */
  retentionMs?: number;
  /** How often retention runs (in the background of the queue's reads); 1 h. */
  pruneEveryMs?: number;
}

interface Failure {
  message: string;
  retryable: boolean;
}

const MAX_ERROR_CHARS = 500;

/**
 * Drains `event_deliveries` (the durable queue `recordEvent` fills): claims due deliveries with
 * FOR UPDATE SKIP LOCKED and a lease (several processes may run one; a delivery whose worker
 * died is claimed again once its lease passed), renders the event, opens the channel's
 * secrets and calls its kind's sender with the delivery id as idempotency key. Channels are
 * independent: each has its own sequential lane, rate limit and send timeout, so a slow or
 * failing channel holds back only itself. Failures retry with doubling delays for a day.
 */
export class DeliveryWorker {
  private readonly sleeper = new WakeableSleep();
  private readonly lanes = new Map<string, { done: Promise<void>; abort: AbortController }>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly failing = new Map<string, number>();
  private loopDone: Promise<void> | undefined;
  private pruning: Promise<unknown> | undefined;
  private prunedAt: number | undefined;
  private stopped = false;
  private woken = false;
  private unsubscribe: () => void = () => {};
  private readonly clock: () => Date;

  constructor(private readonly o: DeliveryWorkerOptions) {
    this.clock = o.clock ?? (() => new Date());
  }

  start(): void {
    if (this.loopDone || this.stopped) return;
    this.unsubscribe = this.o.signal?.subscribe(() => this.wake()) ?? (() => {});
    this.loopDone = this.loop();
  }

  wake(): void {
    this.woken = true;
    this.sleeper.wake();
  }

  /** Stops claiming, aborts the sends under way (their deliveries are released, not counted) and waits for the lanes. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    this.sleeper.wake();
    await this.loopDone;
    await this.pruning;
    for (const lane of this.lanes.values()) lane.abort.abort();
    await Promise.all([...this.lanes.values()].map((l) => l.done));
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.pass();
      } catch (err) {
        this.o.log.warn({ err: messageOf(err) }, 'event delivery: cannot read the queue; retrying');
      }
      if (this.stopped) break;
      this.pruneIfDue();
      if (this.woken) {
        this.woken = false;
        continue;
      }
      await this.sleeper.sleep(this.o.pollMs ?? 1000);
    }
  }

  /** Starts retention when it is due and not running; the queue's reads go on meanwhile. */
  private pruneIfDue(): void {
    const now = this.clock().getTime();
    if (this.pruning || (this.prunedAt !== undefined && now - this.prunedAt < (this.o.pruneEveryMs ?? 3600_000))) return;
    this.prunedAt = now;
    this.pruning = this.prune(new Date(now - (this.o.retentionMs ?? DEFAULT_EVENT_RETENTION_DAYS * 24 * 3600_000))).finally(() => {
      this.pruning = undefined;
    });
  }

  /** Deletes the events (with their deliveries) older than `before`; answers how many. Never throws. */
  async prune(before: Date): Promise<number> {
    try {
      const deleted = await pruneEvents(this.o.db, before, { stopped: () => this.stopped });
      if (deleted > 0) this.o.log.info({ deleted, before: before.toISOString() }, 'event retention: deleted old events and their deliveries');
      return deleted;
    } catch (err) {
      this.o.log.warn({ err: messageOf(err) }, 'event retention: cannot delete old events; trying again later');
      return 0;
    }
  }

  private bucket(notificationId: string, now: number): TokenBucket {
    let b = this.buckets.get(notificationId);
    if (!b) {
      const rate = this.o.rate ?? { burst: 10, intervalMs: 1000 };
      b = new TokenBucket(rate.burst, rate.intervalMs, now);
      this.buckets.set(notificationId, b);
    }
    return b;
  }

  /** Claims what is due for channels not busy here, each up to what its rate allows now, and starts their lanes. */
  async pass(): Promise<void> {
    const now = this.clock();
    const nowMs = Date.now();
    const busy = [...this.lanes.keys()];
    const claimed = await this.o.db.transaction().execute(async (tx) => {
      let q = tx
        .selectFrom('eventDeliveries')
        .select(['id', 'notificationId'])
        .where('status', '=', 'pending')
        .where('nextAttemptAt', '<=', now)
        .where((eb) => eb.or([eb('claimedUntil', 'is', null), eb('claimedUntil', '<', now)]));
      if (busy.length > 0) q = q.where('notificationId', 'not in', busy);
      const rows = await q
        .orderBy('nextAttemptAt')
        .orderBy('eventId')
        .limit(this.o.batchSize ?? 100)
        .forUpdate()
        .skipLocked()
        .execute();
      const perChannel = new Map<string, string[]>();
      for (const r of rows) {
        const ids = perChannel.get(r.notificationId) ?? [];
        if (ids.length < this.bucket(r.notificationId, nowMs).available(nowMs)) ids.push(r.id);
        perChannel.set(r.notificationId, ids);
      }
      const kept = [...perChannel.values()].flat();
      if (kept.length > 0) {
        await tx
          .updateTable('eventDeliveries')
          .set({ claimedUntil: new Date(now.getTime() + (this.o.leaseMs ?? 120_000)) })
          .where('id', 'in', kept)
          .execute();
      }
      return perChannel;
    });
    for (const [notificationId, ids] of claimed) {
      if (ids.length === 0) continue;
      const abort = new AbortController();
      const done = this.runLane(notificationId, ids, abort.signal).finally(() => {
        this.lanes.delete(notificationId);
        if (!this.stopped) this.wake();
      });
      this.lanes.set(notificationId, { done, abort });
    }
  }

  private async runLane(notificationId: string, ids: string[], stop: AbortSignal): Promise<void> {
    for (const id of ids) {
      const bucket = this.bucket(notificationId, Date.now());
      while (!stop.aborted && !bucket.take(Date.now())) await sleep(bucket.waitMs(Date.now()), stop);
      if (stop.aborted) {
        await this.release(ids.slice(ids.indexOf(id)));
        return;
      }
      try {
        // The lease covers one send from here, not the whole lane (its rate waits and sends).
        await this.renew(ids.slice(ids.indexOf(id)));
        await this.deliver(id, stop);
      } catch (err) {
        this.o.log.warn({ err: messageOf(err), deliveryId: id, notificationId }, 'event delivery: could not record an attempt; it is claimed again after its lease');
      }
    }
  }

  private async renew(ids: string[]): Promise<void> {
    const until = new Date(this.clock().getTime() + (this.o.leaseMs ?? 120_000));
    await this.o.db.updateTable('eventDeliveries').set({ claimedUntil: until }).where('id', 'in', ids).where('status', '=', 'pending').execute();
  }

  /** Gives deliveries back to the queue without counting an attempt (the worker stops). */
  private async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.o.db.updateTable('eventDeliveries').set({ claimedUntil: null }).where('id', 'in', ids).where('status', '=', 'pending').execute();
  }

  private async deliver(id: string, stop: AbortSignal): Promise<void> {
    const row = await this.o.db
      .selectFrom('eventDeliveries as d')
      .innerJoin('events as e', 'e.id', 'd.eventId')
      .innerJoin('notifications as n', 'n.id', 'd.notificationId')
      .innerJoin('organizations as o', 'o.id', 'd.organizationId')
      .selectAll('e')
      .select([
        'd.id as deliveryId',
        'd.status as deliveryStatus',
        'd.attempts',
        'd.createdAt as queuedAt',
        'd.notificationId',
        'n.kind as channelKind',
        'n.config as channelConfig',
        'n.secrets as channelSecrets',
        'o.name as organizationName',
      ])
      .where('d.id', '=', id)
      .executeTakeFirst();
    if (!row || row.deliveryStatus !== 'pending') return;
    const event: EventRecord = {
      id: String(row.id),
      organizationId: row.organizationId,
      kind: row.kind,
      outcome: row.outcome,
      workloadKind: row.workloadKind,
      workloadId: row.workloadId,
      workloadName: row.workloadName,
      projectId: row.projectId,
      environmentId: row.environmentId,
      serverId: row.serverId,
      summary: row.summary,
      occurredAt: row.occurredAt,
    };
    let secrets: Record<string, unknown> = {};
    let failure: Failure | undefined;
    try {
      const sender = this.o.senders[row.channelKind];
      if (!sender) throw new DeliveryError(`this control plane has no sender for ${row.channelKind} channels`, true);
      secrets = JSON.parse(this.o.secrets.open(row.channelSecrets)) as Record<string, unknown>;
      const message = renderEvent(event, { organizationName: row.organizationName, baseUrl: this.o.baseUrl });
      const target = { notificationId: row.notificationId, kind: row.channelKind, config: row.channelConfig, secrets };
      await withTimeout(this.o.sendTimeoutMs ?? 15_000, stop, (signal) => sender(target, message, { idempotencyKey: id, signal }));
    } catch (err) {
      if (stop.aborted) {
        await this.release([id]);
        return;
      }
      failure = describe(err, secrets);
    }
    await this.record(row, failure);
  }

  private async record(row: { deliveryId: string; notificationId: string; channelKind: string; attempts: number; queuedAt: Date }, failure: Failure | undefined): Promise<void> {
    const now = this.clock();
    const attempts = row.attempts + 1;
    const where = { id: row.deliveryId };
    if (!failure) {
      await this.o.db
        .updateTable('eventDeliveries')
        .set({ status: 'delivered', attempts, deliveredAt: now, claimedUntil: null, lastError: null })
        .where('id', '=', where.id)
        .execute();
      if ((this.failing.get(row.notificationId) ?? 0) >= (this.o.reportAfterFailures ?? 5)) {
        this.o.log.info({ notificationId: row.notificationId }, 'event delivery: the channel accepts messages again');
      }
      this.failing.delete(row.notificationId);
      return;
    }
    const backoff = this.o.backoff ?? { minMs: 10_000, maxMs: 3600_000 };
    const delay = Math.min(backoff.maxMs, backoff.minMs * 2 ** Math.min(attempts - 1, 30));
    const giveUp = !failure.retryable || now.getTime() + delay - row.queuedAt.getTime() > (this.o.giveUpAfterMs ?? 24 * 3600_000);
    await this.o.db
      .updateTable('eventDeliveries')
      .set({
        status: giveUp ? 'failed' : 'pending',
        attempts,
        nextAttemptAt: new Date(now.getTime() + delay),
        claimedUntil: null,
        lastError: failure.message,
      })
      .where('id', '=', where.id)
      .execute();
    const failures = (this.failing.get(row.notificationId) ?? 0) + 1;
    this.failing.set(row.notificationId, failures);
    const context = { deliveryId: row.deliveryId, notificationId: row.notificationId, channelKind: row.channelKind, attempts, error: failure.message };
    if (giveUp) this.o.log.error(context, 'event delivery: given up; the channel did not take the message');
    else this.o.log.warn({ ...context, retryInMs: delay }, 'event delivery: the channel refused the message; retrying');
    if (failures === (this.o.reportAfterFailures ?? 5)) {
      this.o.log.error({ notificationId: row.notificationId, channelKind: row.channelKind, failures }, 'event delivery: the channel keeps failing (notification.deliveries lists its errors)');
    }
  }
}

/** Runs `send` with its own abort signal, ended after `ms` or when `stop` aborts, whether or not the sender heeds it. */
async function withTimeout(ms: number, stop: AbortSignal, send: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const onStop = () => controller.abort(stop.reason);
  stop.addEventListener('abort', onStop);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new DeliveryError(`no answer within ${ms} ms`, true));
      controller.abort();
    }, ms);
    controller.signal.addEventListener('abort', () => reject(new DeliveryError('aborted', true)));
  });
  timeout.catch(() => {});
  try {
    await Promise.race([send(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
    stop.removeEventListener('abort', onStop);
  }
}

/** The failure as stored and logged: a DeliveryError's message, anything else by its message, with the channel's secret values cut out. */
function describe(err: unknown, secrets: Record<string, unknown>): Failure {
  let message = err instanceof DeliveryError ? err.message : `the sender failed: ${messageOf(err)}`;
  for (const value of Object.values(secrets)) {
    if (typeof value === 'string' && value.length >= 4) message = message.split(value).join('[secret]');
  }
  return { message: message.slice(0, MAX_ERROR_CHARS), retryable: err instanceof DeliveryError ? err.retryable : true };
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

function sleep(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    }
    stop.addEventListener('abort', done);
  });
}
