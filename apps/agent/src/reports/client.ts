/**
 * Sends the agent's reports (deployment events, command results) to the control plane's
 * AgentReports gRPC service, authenticated with `authorization: Bearer <credential>`.
 *
 * Reports go through one in-memory FIFO queue, so a deployment's events always reach the
 * control plane before its command's result. The head of the queue is retried with
 * exponential backoff while the control plane cannot be reached (or answers with a
 * transient status): nothing is lost while the agent runs. A report the control plane
 * refuses for good (INVALID_ARGUMENT, NOT_FOUND…) is dropped with an error log. Events go
 * in batches through one ReportDeploymentEvents stream per batch, so the stream's Ack says
 * the whole batch arrived; re-sending is safe (the control plane de-duplicates by
 * deployment id and sequence). The credential is never logged.
 */
import { ChannelCredentials, Metadata, credentials as grpcCredentials, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import {
  AgentReportsClient,
  CommandStatus,
  DeploymentStatus,
  commandStatusToJSON,
  type CommandResult,
  type CrashLoop,
  type DeploymentEvent,
  type MetricsBatch,
} from '@skiff/proto';
import { WakeableSleep } from '@skiff/domain';
import type { Logger } from 'pino';

export interface ReportClientOptions {
  /** gRPC target of the control plane (`host:port`, `dns:///…`, `unix:///…`). */
  target: string;
  credential: string;
  log: Logger;
  /** Default: insecure (loopback, or a private network the operator trusts). */
  channelCredentials?: ChannelCredentials;
  /** Deadline of one call. Default 10 s. */
  callTimeoutMs?: number;
  /** Backoff between attempts: initial and maximum. Defaults 200 ms and 10 s. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** Queue bound; past it the oldest log-only events are dropped. Default 10 000. */
  maxQueued?: number;
  /** Events per stream. Default 100. */
  maxBatch?: number;
  /** Told each command whose result the control plane took or refused for good (the journal's `delivered`). */
  onResultSettled?: (commandId: string) => void;
}

type Report =
  | { kind: 'event'; event: DeploymentEvent }
  | { kind: 'result'; result: CommandResult }
  | { kind: 'crashLoop'; crashLoop: CrashLoop };

/** Codes that mean "not now": the same report is tried again later. */
const TRANSIENT = new Set<number>([
  grpcStatus.UNAVAILABLE,
  grpcStatus.DEADLINE_EXCEEDED,
  grpcStatus.RESOURCE_EXHAUSTED,
  grpcStatus.ABORTED,
  grpcStatus.INTERNAL,
  grpcStatus.UNKNOWN,
  grpcStatus.CANCELLED,
  // The control plane may not know this server's credential yet (or is rotating it):
  // keep the reports until it does rather than lose them.
  grpcStatus.UNAUTHENTICATED,
  grpcStatus.PERMISSION_DENIED,
]);

export class ReportClient {
  private readonly client: AgentReportsClient;
  private readonly metadata: Metadata;
  private readonly queue: Report[] = [];
  private readonly callTimeoutMs: number;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private readonly maxQueued: number;
  private readonly maxBatch: number;
  private readonly log: Logger;
  private readonly onResultSettled: (commandId: string) => void;
  private pumping = false;
  private closed = false;
  private readonly backoff = new WakeableSleep();
  private idleWaiters: Array<() => void> = [];
  /** After a batch was refused for good, its events go one by one to isolate the bad one. */
  private singles = 0;
  /** Reports at the head of the queue being sent right now (never shed). */
  private inFlight = 0;
  /** Log-only events queued, and among them in flight: none left to shed, the queue is not read for one. */
  private logOnlyQueued = 0;
  private logOnlyInFlight = 0;

  constructor(options: ReportClientOptions) {
    this.log = options.log;
    this.callTimeoutMs = options.callTimeoutMs ?? 10_000;
    this.retryInitialMs = options.retryInitialMs ?? 200;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
    this.maxQueued = options.maxQueued ?? 10_000;
    this.maxBatch = options.maxBatch ?? 100;
    this.onResultSettled = options.onResultSettled ?? (() => {});
    this.metadata = new Metadata();
    this.metadata.set('authorization', `Bearer ${options.credential}`);
    this.client = new AgentReportsClient(options.target, options.channelCredentials ?? grpcCredentials.createInsecure(), {
      // grpc-js backs off up to 120 s between connection attempts by default; the agent
      // wants to notice a returning control plane within seconds.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': Math.max(1000, this.retryMaxMs),
    });
  }

  reportEvent(event: DeploymentEvent): void {
    this.enqueue({ kind: 'event', event });
  }

  reportResult(result: CommandResult): void {
    this.enqueue({ kind: 'result', result });
  }

  reportCrashLoop(crashLoop: CrashLoop): void {
    this.enqueue({ kind: 'crashLoop', crashLoop });
  }

  /**
   * Sends one batch of metric samples at once, outside the queue: samples are not worth a
   * retry (a lost round is a gap in the graphs), so a failure only rejects.
   */
  sendMetrics(batch: MetricsBatch): Promise<void> {
    if (this.closed) return Promise.reject(new Error('report client closed'));
    const deadline = new Date(Date.now() + this.callTimeoutMs);
    return new Promise<void>((resolve, reject) => {
      this.client.reportMetrics(batch, this.metadata, { deadline }, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Reports waiting to be delivered. */
  get pending(): number {
    return this.queue.length;
  }

  /** Resolves true once everything queued so far is delivered (or dropped), false at the timeout. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.queue.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([idle, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops sending; what is still queued is logged as lost (by count, never content). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.backoff.wake();
    if (this.queue.length > 0) this.log.warn({ pending: this.queue.length }, 'reports not delivered before the agent stopped');
    this.client.close();
  }

  private enqueue(report: Report): void {
    if (this.closed) {
      this.log.warn({ report: describe(report) }, 'report after close, dropped');
      return;
    }
    this.queue.push(report);
    if (isLogOnly(report)) this.logOnlyQueued++;
    if (this.queue.length > this.maxQueued) this.shed();
    if (!this.pumping) void this.pump();
  }

  /** Drops the oldest log-only events; statuses and results are never dropped. */
  private shed(): void {
    if (this.logOnlyQueued === this.logOnlyInFlight) return;
    const index = this.queue.findIndex((r, i) => i >= this.inFlight && isLogOnly(r));
    if (index < 0) return;
    this.drop(index, 1);
    this.log.warn({ maxQueued: this.maxQueued }, 'report queue full: dropped the oldest log-only deployment event');
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    let delay = this.retryInitialMs;
    try {
      while (!this.closed && this.queue.length > 0) {
        const batch = this.nextBatch();
        this.inFlight = batch.length;
        this.logOnlyInFlight = batch.filter(isLogOnly).length;
        try {
          await this.send(batch);
          this.inFlight = this.logOnlyInFlight = 0;
          this.drop(0, batch.length);
          this.settled(batch);
          if (this.singles > 0) this.singles = Math.max(0, this.singles - batch.length);
          delay = this.retryInitialMs;
        } catch (err) {
          this.inFlight = this.logOnlyInFlight = 0;
          const e = err as ServiceError;
          if (TRANSIENT.has(e.code)) {
            this.log.warn({ code: grpcStatus[e.code], details: e.details, report: describe(batch[0]) }, 'control plane not reachable, report will be retried');
            await this.backoff.sleep(delay);
            delay = Math.min(delay * 2, this.retryMaxMs);
          } else if (batch.length > 1) {
            this.singles = batch.length;
          } else {
            this.log.error({ code: grpcStatus[e.code], details: e.details, report: describe(batch[0]) }, 'control plane refused a report, dropped');
            this.drop(0, 1);
            this.settled(batch);
            if (this.singles > 0) this.singles--;
          }
        }
      }
    } finally {
      this.pumping = false;
      if (this.queue.length === 0 || this.closed) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  private drop(start: number, count: number): void {
    for (const r of this.queue.splice(start, count)) if (isLogOnly(r)) this.logOnlyQueued--;
  }

  private settled(batch: Report[]): void {
    for (const r of batch) if (r.kind === 'result') this.onResultSettled(r.result.commandId);
  }

  /** The leading run of events (one when isolating), or the leading result. */
  private nextBatch(): Report[] {
    const first = this.queue[0];
    if (first.kind !== 'event') return [first];
    const limit = this.singles > 0 ? 1 : this.maxBatch;
    const batch: Report[] = [];
    for (const r of this.queue) {
      if (r.kind !== 'event' || batch.length >= limit) break;
      batch.push(r);
    }
    return batch;
  }

  private send(batch: Report[]): Promise<void> {
    const deadline = new Date(Date.now() + this.callTimeoutMs);
    return new Promise<void>((resolve, reject) => {
      const done = (err: ServiceError | null) => (err ? reject(err) : resolve());
      const first = batch[0];
      if (first.kind === 'result') {
        this.client.reportCommandResult(first.result, this.metadata, { deadline }, done);
        return;
      }
      if (first.kind === 'crashLoop') {
        this.client.reportCrashLoop(first.crashLoop, this.metadata, { deadline }, done);
        return;
      }
      const stream = this.client.reportDeploymentEvents(this.metadata, { deadline }, done);
      // A failed stream reports through the callback; this only keeps 'error' from throwing.
      stream.on('error', () => {});
      for (const r of batch) if (r.kind === 'event') stream.write(r.event);
      stream.end();
    });
  }
}

/** An event that only carries log lines: what a full queue sheds first. */
const isLogOnly = (r: Report) => r.kind === 'event' && r.event.status === DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED;

/** What a log may say about a report: ids and statuses, never log lines' text. */
function describe(report: Report | undefined): Record<string, unknown> | undefined {
  if (!report) return undefined;
  if (report.kind === 'result') {
    return { commandId: report.result.commandId, status: commandStatusToJSON(report.result.status ?? CommandStatus.COMMAND_STATUS_UNSPECIFIED) };
  }
  if (report.kind === 'crashLoop') return { crashLoop: report.crashLoop.workloadId, deploymentId: report.crashLoop.deploymentId };
  return { deploymentId: report.event.deploymentId, sequence: report.event.sequence };
}
