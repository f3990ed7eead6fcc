import { createHash } from 'node:crypto';
import {
  type Metadata,
  Server,
  ServerCredentials,
  type ServerErrorResponse,
  type ServerReadableStream,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import {
  type Ack,
  AgentReportsService,
  type AgentReportsServer,
  type DeploymentEvent,
  timestampFromDate,
} from '@skiff/proto';
import type { Logger } from 'pino';
import { type DeploymentReports, ReportRefused } from '../services/deployment-reports.js';

const digest = (credential: string) => createHash('sha256').update(credential, 'utf8').digest('hex');

/**
 * Which server a credential belongs to. Credentials are kept as SHA-256 digests and looked
 * up by the digest of what is presented, so the comparison never depends on the secret.
 */
export class AgentCredentials {
  private readonly byDigest = new Map<string, string>();

  add(credential: string, serverId: string): this {
    if (credential.length < 16) throw new Error('an agent credential must be at least 16 characters');
    this.byDigest.set(digest(credential), serverId);
    return this;
  }

  serverOf(credential: string): string | undefined {
    return this.byDigest.get(digest(credential));
  }
}

export interface ReportServerOptions {
  reports: DeploymentReports;
  credentials: AgentCredentials;
  clock: () => Date;
  log: Logger;
  heartbeatIntervalSeconds?: number;
}

type GrpcError = Partial<ServerErrorResponse> & { code: status; details: string };

const grpcError = (code: status, details: string): GrpcError => Object.assign(new Error(details), { code, details });

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

  /** Listens on `host:port` (0: any free port); answers the port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
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
    if (!serverId) return grpcError(status.UNAUTHENTICATED, 'unknown server credential');
    this.lastSeen.set(serverId, this.o.clock());
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
        const { credential } = call.request;
        if (credential?.$case === 'joinToken') {
          callback(grpcError(status.UNIMPLEMENTED, 'joining with a one-time token is not available yet'), null);
          return;
        }
        const serverId = this.authenticate(call.metadata, credential?.value);
        if (typeof serverId !== 'string') return callback(serverId, null);
        this.o.log.info({ serverId, agentVersion: call.request.agentVersion }, 'agent registered');
        callback(null, { serverId, serverCredential: '', heartbeatIntervalSeconds: this.o.heartbeatIntervalSeconds ?? 15 });
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

      reportCommandResult: (call, callback) => {
        const serverId = this.authenticate(call.metadata);
        if (typeof serverId !== 'string') return callback(serverId, null);
        this.o.reports.applyCommandResult(serverId, call.request).then(
          () => callback(null, {}),
          (err) => callback(this.failure(err, 'command result'), null),
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
