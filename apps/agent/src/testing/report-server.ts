/**
 * Tests only: a real AgentReports gRPC server on loopback that records what agents send
 * (the real wire format), as the control plane's would receive it.
 */
import { Metadata, Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { type RemovedServerWorkloads, serverRemovedDetails } from '@skiff/domain';
import { AgentReportsService, type AgentReportsServer, type CommandResult, type CrashLoop, type DeploymentEvent, type MetricsBatch } from '@skiff/proto';

export interface RecordingReportServer {
  port: number;
  target: string;
  events: DeploymentEvent[];
  results: CommandResult[];
  crashLoops: CrashLoop[];
  /** Metric batches received (ReportMetrics). */
  metrics: MetricsBatch[];
  /** The `authorization` header of every call. */
  authorizations: string[];
  /** When set, every report call answers with this status code instead of OK. */
  refuseWith: status | null;
  /** When set, Register answers with this status code instead of OK. */
  refuseRegistrationWith: status | null;
  /** When set, Register and Heartbeat answer as to a removed server's credential (PERMISSION_DENIED, what to do with its workloads). */
  removed: RemovedServerWorkloads | null;
  /** The heartbeat interval Register asks for (15 s unless set). */
  heartbeatIntervalSeconds: number;
  /** Heartbeats received (answered or refused). */
  heartbeats: number;
  /** The NATS credentials Register hands out (operator mode); none when unset. */
  natsCredentials: ((serverId: string) => Promise<{ creds: string; inboxPrefix: string }>) | null;
  /** Server ids of the registrations answered OK, in order. */
  registrations: string[];
  /** Events of one deployment, de-duplicated by sequence like the control plane does, in order. */
  eventsOf(deploymentId: string): DeploymentEvent[];
  stop(): Promise<void>;
}

/** On loopback `port` (0: a free one), in clear, or with TLS when given a certificate (PEM). */
export async function startReportServer(port = 0, tls?: { cert: string; key: string }): Promise<RecordingReportServer> {
  const server = new Server();
  const recorder: RecordingReportServer = {
    port: 0,
    target: '',
    events: [],
    results: [],
    crashLoops: [],
    metrics: [],
    authorizations: [],
    refuseWith: null,
    refuseRegistrationWith: null,
    removed: null,
    heartbeatIntervalSeconds: 15,
    heartbeats: 0,
    natsCredentials: null,
    registrations: [],
    eventsOf(deploymentId) {
      const bySequence = new Map<string, DeploymentEvent>();
      for (const e of recorder.events) if (e.deploymentId === deploymentId && !bySequence.has(e.sequence)) bySequence.set(e.sequence, e);
      return [...bySequence.values()].sort((a, b) => Number(a.sequence) - Number(b.sequence));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
  const refusal = (): ServiceError | null =>
    recorder.refuseWith === null
      ? null
      : Object.assign(new Error('refused by the test'), { code: recorder.refuseWith, details: 'refused by the test', metadata: new Metadata() });
  const removedError = (workloads: RemovedServerWorkloads): ServiceError =>
    Object.assign(new Error('removed'), { code: status.PERMISSION_DENIED, details: serverRemovedDetails(workloads), metadata: new Metadata() });
  const note = (metadata: Metadata) => recorder.authorizations.push(String(metadata.get('authorization')[0] ?? ''));

  const impl: AgentReportsServer = {
    register: (call, callback) => {
      const { serverId } = call.request;
      if (recorder.removed) return callback(removedError(recorder.removed), null);
      if (recorder.refuseRegistrationWith !== null) {
        const code = recorder.refuseRegistrationWith;
        return callback(Object.assign(new Error('refused by the test'), { code, details: 'unknown server credential', metadata: new Metadata() }), null);
      }
      (recorder.natsCredentials?.(serverId) ?? Promise.resolve(null)).then(
        (nats) => {
          recorder.registrations.push(serverId);
          callback(null, { serverId, serverCredential: '', heartbeatIntervalSeconds: recorder.heartbeatIntervalSeconds, natsCredentials: nats?.creds ?? '', natsInboxPrefix: nats?.inboxPrefix ?? '' });
        },
        (err: Error) => callback(Object.assign(err, { code: status.INTERNAL, details: err.message, metadata: new Metadata() }), null),
      );
    },
    heartbeat: (_call, callback) => {
      recorder.heartbeats += 1;
      if (recorder.removed) return callback(removedError(recorder.removed), null);
      callback(null, { serverTime: undefined });
    },
    reportMetrics: (call, callback) => {
      note(call.metadata);
      const err = refusal();
      if (err) return callback(err, null);
      recorder.metrics.push(call.request);
      callback(null, {});
    },
    reportDeploymentEvents: (call, callback) => {
      note(call.metadata);
      const received: DeploymentEvent[] = [];
      call.on('data', (event: DeploymentEvent) => received.push(event));
      call.on('end', () => {
        const err = refusal();
        if (err) return callback(err, null);
        recorder.events.push(...received);
        callback(null, {});
      });
    },
    reportCommandResult: (call, callback) => {
      note(call.metadata);
      const err = refusal();
      if (err) return callback(err, null);
      recorder.results.push(call.request);
      callback(null, {});
    },
    reportCrashLoop: (call, callback) => {
      note(call.metadata);
      recorder.crashLoops.push(call.request);
      callback(null, {});
    },
  };
  server.addService(AgentReportsService, impl);
  recorder.port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${port}`,
      tls ? ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }], false) : ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );
  recorder.target = `127.0.0.1:${recorder.port}`;
  return recorder;
}
