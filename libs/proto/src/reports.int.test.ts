import { Metadata, Server, ServerCredentials, credentials, status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentReportsClient,
  AgentReportsService,
  CommandStatus,
  DeploymentStatus,
  type AgentReportsServer,
  type DeploymentEvent,
} from './index.js';

function invalidArgument(details: string): ServiceError {
  return Object.assign(new Error(details), { code: status.INVALID_ARGUMENT, details, metadata: new Metadata() });
}

// The generated grpc-js service definition and client, over a real loopback connection.
describe('AgentReports over grpc-js', () => {
  const received: DeploymentEvent[] = [];
  const server = new Server();
  let client: AgentReportsClient;

  const impl: AgentReportsServer = {
    register: (call, callback) =>
      callback(null, { serverId: call.request.serverId, serverCredential: 'cred', heartbeatIntervalSeconds: 15, natsCredentials: '', natsInboxPrefix: '' }),
    heartbeat: (_call, callback) => callback(null, { serverTime: { seconds: '1', nanos: 0 } }),
    reportDeploymentEvents: (call, callback) => {
      call.on('data', (event: DeploymentEvent) => received.push(event));
      call.on('end', () => callback(null, {}));
    },
    reportMetrics: (_call, callback) => callback(null, {}),
    reportCommandResult: (call, callback) =>
      call.request.status === CommandStatus.COMMAND_STATUS_UNSPECIFIED
        ? callback(invalidArgument('status is required'), null)
        : callback(null, {}),
    reportCrashLoop: (_call, callback) => callback(null, {}),
  };

  beforeAll(async () => {
    server.addService(AgentReportsService, impl);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    client = new AgentReportsClient(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });

  it('registers with a join token', async () => {
    const response = await new Promise((resolve, reject) =>
      client.register(
        {
          serverId: 'srv1',
          agentVersion: '0.0.0',
          hostname: 'h',
          dockerVersion: '27.0.0',
          credential: { $case: 'joinToken', value: 'jt' },
        },
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    expect(response).toEqual({ serverId: 'srv1', serverCredential: 'cred', heartbeatIntervalSeconds: 15, natsCredentials: '', natsInboxPrefix: '' });
  });

  it('streams deployment events in order', async () => {
    await new Promise<void>((resolve, reject) => {
      const stream = client.reportDeploymentEvents((err) => (err ? reject(err) : resolve()));
      for (let i = 1; i <= 3; i++) {
        stream.write({
          deploymentId: 'dep1',
          commandId: 'cmd1',
          sequence: String(i),
          status: i === 3 ? DeploymentStatus.DEPLOYMENT_STATUS_DONE : DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED,
          logLines: [{ time: { seconds: String(i), nanos: 0 }, text: `line ${i}` }],
          reason: '',
          occurredAt: undefined,
        });
      }
      stream.end();
    });
    expect(received.map((e) => [e.sequence, e.status, e.logLines[0]?.text])).toEqual([
      ['1', DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED, 'line 1'],
      ['2', DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED, 'line 2'],
      ['3', DeploymentStatus.DEPLOYMENT_STATUS_DONE, 'line 3'],
    ]);
  });

  it('carries server errors to the caller', async () => {
    const err = await new Promise<Error & { code?: number }>((resolve) =>
      client.reportCommandResult(
        { commandId: 'c', status: CommandStatus.COMMAND_STATUS_UNSPECIFIED, reason: '', finishedAt: undefined },
        (e) => resolve(e as Error & { code?: number }),
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
  });
});
