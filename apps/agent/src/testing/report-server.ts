/**
 * Tests only: a real AgentReports gRPC server on loopback that records what agents send
 * (the real wire format), as the control plane's would receive it.
 */
import { Metadata, Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { AgentReportsService, type AgentReportsServer, type CommandResult, type DeploymentEvent } from '@skiff/proto';

export interface RecordingReportServer {
  port: number;
  target: string;
  events: DeploymentEvent[];
  results: CommandResult[];
  /** The `authorization` header of every call. */
  authorizations: string[];
  /** When set, every call answers with this status code instead of OK. */
  refuseWith: status | null;
  /** Events of one deployment, de-duplicated by sequence like the control plane does, in order. */
  eventsOf(deploymentId: string): DeploymentEvent[];
  stop(): Promise<void>;
}

export async function startReportServer(port = 0): Promise<RecordingReportServer> {
  const server = new Server();
  const recorder: RecordingReportServer = {
    port: 0,
    target: '',
    events: [],
    results: [],
    authorizations: [],
    refuseWith: null,
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
  const note = (metadata: Metadata) => recorder.authorizations.push(String(metadata.get('authorization')[0] ?? ''));

  const impl: AgentReportsServer = {
    register: (call, callback) => callback(null, { serverId: call.request.serverId, serverCredential: '', heartbeatIntervalSeconds: 15, natsCredentials: '', natsInboxPrefix: '' }),
    heartbeat: (_call, callback) => callback(null, { serverTime: undefined }),
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
  };
  server.addService(AgentReportsService, impl);
  recorder.port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  recorder.target = `127.0.0.1:${recorder.port}`;
  return recorder;
}
