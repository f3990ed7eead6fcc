/**
 * The agent's presence at the control plane: the join (a one-time token for a credential),
 * then Register at start (what the agent runs: its version, the host name, Docker's version)
 * and a Heartbeat every interval the control plane asks for. The control plane may be
 * unreachable at any moment: calls are retried with backoff, never given up while the agent
 * runs, and a failure is logged when it starts and when it ends, not at every attempt. Only
 * a refusal ends the attempts: of a join token (JoinRefusedError), or of the credential at
 * registration (RegistrationRefusedError: revoked, or the server removed), and the control
 * plane saying, to a heartbeat, that the server was removed (`onRemoved`).
 * Credentials and tokens are never logged.
 */
import { type ChannelCredentials, Metadata, credentials as grpcCredentials, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AgentReportsClient, type RegisterRequest, type RegisterResponse, timestampFromDate } from '@skiff/proto';
import { type RemovedServerWorkloads, removedServerWorkloads } from '@skiff/domain';
import type { Logger } from 'pino';
import { JoinRefusedError, RegistrationRefusedError, type NatsCredentials } from '../credential.js';

export interface AgentInfo {
  agentVersion: string;
  hostname: string;
  /** Empty when the engine could not be asked. */
  dockerVersion: string;
}

export interface PresenceOptions {
  target: string;
  serverId: string;
  info: AgentInfo;
  log: Logger;
  channelCredentials?: ChannelCredentials;
  /** Deadline of one call. Default 10 s. */
  callTimeoutMs?: number;
  /** Backoff between failed attempts. Defaults 500 ms to 15 s. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** Called once, heartbeats ended, when the control plane answers that this server was removed. */
  onRemoved?: (workloads: RemovedServerWorkloads) => void;
  /** Told the NATS credentials of every registration (null: NATS needs none), to keep them. */
  onNatsCredentials?: (nats: NatsCredentials | null) => void;
}

/** Answers that no retry changes: the token or credential is not accepted. */
const REFUSED = new Set<number>([grpcStatus.UNAUTHENTICATED, grpcStatus.PERMISSION_DENIED, grpcStatus.INVALID_ARGUMENT]);
/** Answers to Register that no retry changes: the credential is revoked, or the server removed or another one. */
const REGISTRATION_REFUSED = new Set<number>([grpcStatus.UNAUTHENTICATED, grpcStatus.PERMISSION_DENIED]);
/** How often a running agent registers again (NATS credentials last 24 hours). */
const REREGISTER_MS = 6 * 3_600_000;

/** What to do with the workloads, when the control plane answers to the credential of a server it removed; else null. */
export const serverRemoval = (err: { code?: number; details?: string }): RemovedServerWorkloads | null =>
  err.code === grpcStatus.PERMISSION_DENIED ? removedServerWorkloads(err.details) : null;

export class AgentPresence {
  private readonly client: AgentReportsClient;
  private readonly callTimeoutMs: number;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private readonly stopped = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private failing = false;
  private nats: NatsCredentials | null = null;
  private registeredAt = 0;
  private reregister: (() => Promise<void>) | undefined;

  constructor(private readonly o: PresenceOptions) {
    this.callTimeoutMs = o.callTimeoutMs ?? 10_000;
    this.retryInitialMs = o.retryInitialMs ?? 500;
    this.retryMaxMs = o.retryMaxMs ?? 15_000;
    this.client = new AgentReportsClient(o.target, o.channelCredentials ?? grpcCredentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': Math.max(1000, this.retryMaxMs),
    });
  }

  /**
   * Presents the join token until the control plane answers: the new credential, or a
   * JoinRefusedError with the control plane's reason. Rejects when the presence is stopped.
   */
  async join(token: string): Promise<string> {
    const request = this.registerRequest({ $case: 'joinToken', value: token });
    const res = await this.retrying('join', () => this.register(request, new Metadata()), (err) => {
      if (REFUSED.has(err.code)) throw new JoinRefusedError(err.details);
    });
    if (!res.serverCredential) throw new JoinRefusedError('the control plane answered the join without a credential');
    this.o.log.info({ serverId: res.serverId }, 'joined the control plane: credential stored');
    return res.serverCredential;
  }

  /**
   * Registers with the credential (retrying until it succeeds or the presence stops), then
   * sends heartbeats until stopped, registering again every `REREGISTER_MS` so the NATS
   * credentials it hands out are renewed long before they expire. Resolves with the first
   * registration; rejects with a RegistrationRefusedError when the control plane refuses the
   * credential (transient failures are retried), or when stopped before it.
   */
  async start(credential: string): Promise<RegisterResponse> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${credential}`);
    const request = this.registerRequest({ $case: 'serverCredential', value: credential });
    const res = await this.retrying('register', () => this.register(request, metadata), (err) => {
      if (REGISTRATION_REFUSED.has(err.code)) throw new RegistrationRefusedError(grpcStatus[err.code] ?? String(err.code), err.details);
    });
    this.keep(res);
    const intervalMs = Math.max(1, res.heartbeatIntervalSeconds || 15) * 1000;
    this.o.log.info({ heartbeatIntervalSeconds: intervalMs / 1000, natsCredentials: res.natsCredentials !== '' }, 'registered with the control plane');
    this.registeredAt = Date.now();
    this.reregister = () => this.register(request, metadata).then((again) => this.keep(again));
    this.beat(metadata, intervalMs);
    return res;
  }

  /**
   * The newest NATS credentials (a `.creds` file's text) from a registration, or the ones
   * given to `useStoredNatsCredentials` until one happened; null when NATS needs none.
   */
  natsCredentials(): NatsCredentials | null {
    return this.nats;
  }

  /** NATS credentials an earlier process's registration handed out, used until a registration replaces them. */
  useStoredNatsCredentials(nats: NatsCredentials | null): void {
    this.nats = nats;
  }

  private keep(res: RegisterResponse): void {
    this.nats = res.natsCredentials ? { creds: res.natsCredentials, inboxPrefix: res.natsInboxPrefix } : null;
    this.o.onNatsCredentials?.(this.nats);
  }

  stop(): void {
    this.stopped.abort();
    clearTimeout(this.timer);
    this.wake?.();
    this.client.close();
  }

  private beat(metadata: Metadata, intervalMs: number): void {
    if (this.stopped.signal.aborted) return;
    this.timer = setTimeout(() => {
      const deadline = new Date(Date.now() + Math.min(this.callTimeoutMs, intervalMs));
      this.client.heartbeat({ sentAt: timestampFromDate(new Date()) }, metadata, { deadline }, (err) => {
        const removal = err ? serverRemoval(err) : null;
        if (removal) {
          // No retry changes it: the heartbeats end here.
          this.o.onRemoved?.(removal);
          return;
        }
        if (err) this.failed('heartbeat', err);
        else this.recovered('heartbeat');
        if (!err && this.reregister && Date.now() - this.registeredAt >= REREGISTER_MS) {
          this.registeredAt = Date.now();
          this.reregister().catch((e: ServiceError) => this.failed('register', e));
        }
        this.beat(metadata, intervalMs);
      });
    }, intervalMs);
  }

  private registerRequest(credential: RegisterRequest['credential']): RegisterRequest {
    return { serverId: this.o.serverId, ...this.o.info, credential };
  }

  private register(request: RegisterRequest, metadata: Metadata): Promise<RegisterResponse> {
    const deadline = new Date(Date.now() + this.callTimeoutMs);
    return new Promise((resolve, reject) =>
      this.client.register(request, metadata, { deadline }, (err, res) => (err || !res ? reject(err) : resolve(res))),
    );
  }

  /** Runs `call` until it succeeds; `refused` may throw to end the attempts. */
  private async retrying<T>(what: string, call: () => Promise<T>, refused?: (err: ServiceError) => void): Promise<T> {
    let delay = this.retryInitialMs;
    for (;;) {
      if (this.stopped.signal.aborted) throw new Error('stopped');
      try {
        const result = await call();
        this.recovered(what);
        return result;
      } catch (err) {
        const e = err as ServiceError;
        refused?.(e);
        this.failed(what, e);
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.retryMaxMs);
      }
    }
  }

  private failed(what: string, err: ServiceError): void {
    if (this.failing) return;
    this.failing = true;
    const level = REFUSED.has(err.code) ? 'error' : 'warn';
    this.o.log[level]({ call: what, code: grpcStatus[err.code], details: err.details }, 'control plane did not take the call; retrying');
  }

  private recovered(what: string): void {
    if (!this.failing) return;
    this.failing = false;
    this.o.log.info({ call: what }, 'control plane reachable again');
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
