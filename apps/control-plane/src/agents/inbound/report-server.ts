import {
  type Metadata,
  Server,
  ServerCredentials,
  type ServerErrorResponse,
  type ServerReadableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import {
  type Ack,
  AgentReportsService,
  type CrashLoop,
  type AgentReportsServer,
  type DeploymentEvent,
  type MetricsBatch,
  timestampFromDate,
} from '@skiff/proto';
import type { Logger } from 'pino';
import { serverRemovedDetails } from '@skiff/domain';
import { type AgentInfo, JoinRefused } from '../../services/servers/server-agents.js';
import type { AgentCredentials } from '../agent-credentials.js';
import type { NatsCredentialIssuer } from '../nats-credentials.js';
import { type DeploymentReports, ReportRefused } from './deployment-reports.js';

/** What the report server needs from the server records (ServerAgents implements it). */
export interface AgentRegistry {
  /** Seconds between heartbeats, told to agents in RegisterResponse. */
  readonly heartbeatIntervalSeconds: number;
  /** Consumes a one-time join token; throws JoinRefused (→ UNAUTHENTICATED) when it cannot be used. */
  join(token: string, claimedServerId: string, info: AgentInfo): Promise<{ serverId: string; credential: string }>;
  /** An agent with its credential registered. */
  registered(serverId: string, info: AgentInfo): Promise<void>;
  /** Any authenticated call: the server's agent is alive. */
  seen(serverId: string): void;
}

export interface ReportServerOptions {
  reports: DeploymentReports;
  credentials: AgentCredentials;
  /** Joins, registrations and presence; without it joining is refused and presence is kept here only. */
  agents?: AgentRegistry;
  clock: () => Date;
  log: Logger;
  /** Used without `agents`. Default 15. */
  heartbeatIntervalSeconds?: number;
  /** Gives each registering agent its NATS credentials; without it (open NATS) agents get none. */
  natsCredentials?: NatsCredentialIssuer;
  /** Applies crash loop reports (services/deployments/crash-loops.ts); without it they are acknowledged and logged. */
  crashLoops?: { apply(serverId: string, report: CrashLoop): Promise<unknown> };
  /** Where agents' metric samples go (MetricsService); without it they are acknowledged and dropped. */
  metrics?: { record(serverId: string, batch: MetricsBatch): Promise<void> };
}

export type GrpcError = Partial<ServerErrorResponse> & { code: status; details: string };

/** An error a gRPC handler answers with: its status code and the details the caller sees. */
export const grpcError = (code: status, details: string): GrpcError => Object.assign(new Error(details), { code, details });

/**
 * The AgentReports gRPC service (proto/skiff/agent/v1/reports.proto): agents register,
 * send heartbeats, stream deployment events and report command results. Every call is
 * authenticated by `authorization: Bearer <credential>`; the calling server comes from the
 * credential, never from a message.
 */
export class ReportServer {
  private readonly server = new Server();
  /** When each server's agent was last heard from (register, heartbeat or a report). */
  readonly lastSeen = new Map<string, Date>();

  constructor(private readonly o: ReportServerOptions) {
    this.server.addService(AgentReportsService, this.handlers());
  }

  /**
   * Serves another of the agents' services (AgentArtifacts) on the same gRPC server; call it
   * before `listen`. `make` receives this server's credential check, so all calls authenticate alike.
   */
  addService<S extends UntypedServiceImplementation>(
    definition: ServiceDefinition<S>,
    make: (authenticate: (metadata: Metadata) => string | GrpcError) => S,
  ): this {
    this.server.addService(definition, make((metadata) => this.authenticate(metadata)));
    return this;
  }

  /**
   * Listens on `host:port` (0: any free port) with TLS when given its certificate (PEM), in
   * clear otherwise (only on a loopback address: startAgentChannel checks); answers the port.
   */
  listen(host: string, port: number, tls?: { cert: string; key: string }): Promise<number> {
    const credentials = tls
      ? ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }], false)
      : ServerCredentials.createInsecure();
    return new Promise((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
    );
  }

  /** Stops accepting calls; open streams get `graceMs` to end, then are cut. */
  async close(graceMs = 2000): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** The server the call's credential belongs to, or an UNAUTHENTICATED error. */
  private authenticate(metadata: Metadata, fromBody?: string): string | GrpcError {
    const header = metadata.get('authorization')[0];
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const credential = match?.[1] ?? fromBody;
    if (!credential) return grpcError(status.UNAUTHENTICATED, 'authorization: Bearer <server credential> is required');
    const serverId = this.o.credentials.serverOf(credential);
    if (!serverId) {
      // A removed server's agent is told so: it stops, rather than retry an unknown credential.
      const removed = this.o.credentials.removedServerOf(credential);
      if (removed) return grpcError(status.PERMISSION_DENIED, serverRemovedDetails(removed.workloads));
      return grpcError(status.UNAUTHENTICATED, 'unknown server credential');
    }
    this.lastSeen.set(serverId, this.o.clock());
    this.o.agents?.seen(serverId);
    return serverId;
  }

  private failure(err: unknown, what: string): GrpcError {
    if (err instanceof ReportRefused) {
      return grpcError(err.code === 'NOT_FOUND' ? status.NOT_FOUND : status.INVALID_ARGUMENT, err.message);
    }
    this.o.log.error({ err }, `agent report failed: ${what}`);
    return grpcError(status.UNAVAILABLE, 'the control plane could not store the report; send it again');
  }

  private handlers(): AgentReportsServer {
    return {
      register: (call, callback) => {
        const { credential, serverId: claimed } = call.request;
        const info: AgentInfo = { agentVersion: call.request.agentVersion, hostname: call.request.hostname, dockerVersion: call.request.dockerVersion };
        const heartbeatIntervalSeconds = this.o.agents?.heartbeatIntervalSeconds ?? this.o.heartbeatIntervalSeconds ?? 15;
        if (credential?.$case === 'joinToken') {
          if (!this.o.agents) return callback(grpcError(status.UNAVAILABLE, 'this control plane does not take joins'), null);
          this.o.agents.join(credential.value, claimed, info).then(
            (joined) => {
              this.lastSeen.set(joined.serverId, this.o.clock());
              callback(null, { serverId: joined.serverId, serverCredential: joined.credential, heartbeatIntervalSeconds, natsCredentials: '', natsInboxPrefix: '' });
            },
            (err: unknown) => {
              if (err instanceof JoinRefused) {
                this.o.log.warn({ serverId: claimed, reason: err.message }, 'join refused');
                return callback(grpcError(status.UNAUTHENTICATED, err.message), null);
              }
              callback(this.failure(err, 'join'), null);
            },
          );
          return;
        }
        const serverId = this.authenticate(call.metadata, credential?.value);
        if (typeof serverId !== 'string') return callback(serverId, null);
        if (claimed && claimed !== serverId) {
          return callback(grpcError(status.PERMISSION_DENIED, `this credential belongs to another server than ${claimed}`), null);
        }
        const registered = this.o.agents?.registered(serverId, info) ?? Promise.resolve();
        const nats = this.o.natsCredentials?.forServer(serverId);
        Promise.all([registered, nats]).then(
          ([, natsCredentials]) => {
            this.o.log.info({ serverId, agentVersion: info.agentVersion, hostname: info.hostname }, 'agent registered');
            callback(null, {
              serverId,
              serverCredential: '',
              heartbeatIntervalSeconds,
              natsCredentials: natsCredentials?.creds ?? '',
              natsInboxPrefix: natsCredentials?.inboxPrefix ?? '',
            });
          },
          (err: unknown) => callback(this.failure(err, 'registration'), null),
        );
      },

      heartbeat: (call, callback) => {
        const serverId = this.authenticate(call.metadata);
        if (typeof serverId !== 'string') return callback(serverId, null);
        callback(null, { serverTime: timestampFromDate(this.o.clock()) });
      },

      reportDeploymentEvents: (call, callback) => {
        const serverId = this.authenticate(call.metadata);
        if (typeof serverId !== 'string') return callback(serverId, null);
        void this.consumeEvents(serverId, call, callback);
      },

      reportMetrics: (call, callback) => {
        const serverId = this.authenticate(call.metadata);
        if (typeof serverId !== 'string') return callback(serverId, null);
        (this.o.metrics?.record(serverId, call.request) ?? Promise.resolve()).then(
          () => callback(null, {}),
          (err) => callback(this.failure(err, 'metrics'), null),
        );
      },

      reportCommandResult: (call, callback) => {
        const serverId = this.authenticate(call.metadata);
        if (typeof serverId !== 'string') return callback(serverId, null);
        this.o.reports.applyCommandResult(serverId, call.request).then(
          () => callback(null, {}),
          (err) => callback(this.failure(err, 'command result'), null),
        );
      },

      reportCrashLoop: (call, callback) => {
        const serverId = this.authenticate(call.metadata);
        if (typeof serverId !== 'string') return callback(serverId, null);
        if (!this.o.crashLoops) {
          this.o.log.warn({ serverId, workloadId: call.request.workloadId }, 'crash loop reported; nothing here applies it');
          return callback(null, {});
        }
        this.o.crashLoops.apply(serverId, call.request).then(
          () => callback(null, {}),
          (err) => callback(this.failure(err, 'crash loop'), null),
        );
      },
    };
  }

  /** Applies a stream's events one after the other; the first refused one ends the stream with its error. */
  private async consumeEvents(serverId: string, call: ServerReadableStream<DeploymentEvent, Ack>, callback: sendUnaryData<Ack>) {
    try {
      for await (const event of call as AsyncIterable<DeploymentEvent>) {
        await this.o.reports.applyEvent(serverId, event);
      }
      callback(null, {});
    } catch (err) {
      if (call.cancelled) return;
      callback(this.failure(err, 'deployment event'), null);
    }
  }
}
