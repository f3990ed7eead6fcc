import { randomBytes } from 'node:crypto';
import { Metadata, type ServiceError, credentials, status } from '@grpc/grpc-js';
import {
  AgentReportsClient,
  type CommandResult,
  CommandStatus,
  type DeploymentEvent,
  DeploymentStatus,
  timestampFromDate,
} from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const credential = randomBytes(32).toString('base64url');
let t: TestPlatform;
let client: AgentReportsClient;
let environmentId: string;

beforeAll(async () => {
  t = await startTestPlatform({ grpc: { host: '127.0.0.1', port: 0 }, localAgentCredential: credential });
  client = new AgentReportsClient(`127.0.0.1:${t.platform.grpcPort}`, credentials.createInsecure());
  environmentId = (await t.call('project.create', { name: 'reports' })).body.environments[0].environmentId;
});
afterAll(async () => {
  client?.close();
  await t?.close();
});

const auth = (cred = credential) => {
  const m = new Metadata();
  m.set('authorization', `Bearer ${cred}`);
  return m;
};

/** Streams events and resolves with the call's outcome: null, or its error. */
function sendEvents(events: Partial<DeploymentEvent>[], metadata = auth()): Promise<ServiceError | null> {
  return new Promise((resolve) => {
    const stream = client.reportDeploymentEvents(metadata, (err) => resolve(err));
    for (const e of events) {
      stream.write({ commandId: '', status: DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED, logLines: [], reason: '', occurredAt: undefined, deploymentId: '', sequence: '0', ...e });
    }
    stream.end();
  });
}

function sendResult(result: Partial<CommandResult>, metadata = auth()): Promise<ServiceError | null> {
  return new Promise((resolve) =>
    client.reportCommandResult({ commandId: '', status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined, ...result }, metadata, (err) => resolve(err)),
  );
}

const lines = (...texts: string[]) => texts.map((text) => ({ time: timestampFromDate(new Date()), text }));

async function queuedDeployment(serverId: string | null = null) {
  const app = (await t.call('application.create', { name: 'api', environmentId, serverId })).body;
  await t.call('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  const dep = await t.call('application.deploy', { applicationId: app.applicationId });
  expect(dep.status, JSON.stringify(dep.body)).toBe(200);
  const command = await t.db.selectFrom('commands').select('id').where('deploymentId', '=', dep.body.deploymentId).executeTakeFirstOrThrow();
  return { applicationId: app.applicationId as string, deploymentId: dep.body.deploymentId as string, commandId: command.id };
}

const deploymentOf = (id: string) => t.db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const appStatus = async (applicationId: string) => (await t.call('application.one', { applicationId })).body.applicationStatus;

describe('deployment events', () => {
  it('move the deployment and the application, append log lines, and drop repeated sequences', async () => {
    const d = await queuedDeployment();
    const startedAt = new Date('2026-11-24T10:00:00.000Z');
    expect(
      await sendEvents([
        { deploymentId: d.deploymentId, commandId: d.commandId, sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING, occurredAt: timestampFromDate(startedAt), logLines: lines('pulling busybox:latest') },
        { deploymentId: d.deploymentId, commandId: d.commandId, sequence: '2', logLines: lines('creating service', 'waiting for tasks') },
      ]),
    ).toBeNull();
    let row = await deploymentOf(d.deploymentId);
    expect(row).toMatchObject({ status: 'running', lastSequence: 2, log: 'pulling busybox:latest\ncreating service\nwaiting for tasks\n' });
    expect(row.startedAt?.toISOString()).toBe(startedAt.toISOString());
    expect(await appStatus(d.applicationId)).toBe('running');

    // A reconnecting agent sends 2 again, then 3: only 3 is new.
    expect(
      await sendEvents([
        { deploymentId: d.deploymentId, sequence: '2', logLines: lines('creating service', 'waiting for tasks') },
        { deploymentId: d.deploymentId, sequence: '3', status: DeploymentStatus.DEPLOYMENT_STATUS_DONE, logLines: lines('1/1 tasks running') },
      ]),
    ).toBeNull();
    row = await deploymentOf(d.deploymentId);
    expect(row).toMatchObject({ status: 'done', lastSequence: 3, reason: null });
    expect(row.log).toBe('pulling busybox:latest\ncreating service\nwaiting for tasks\n1/1 tasks running\n');
    expect(row.finishedAt).not.toBeNull();
    expect(await appStatus(d.applicationId)).toBe('done');
    const logs = await t.call('deployment.readLogs', { deploymentId: d.deploymentId });
    expect(logs.body).toMatchObject({ status: 'done', log: row.log });

    // An ended deployment does not move again.
    expect(await sendEvents([{ deploymentId: d.deploymentId, sequence: '4', status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING }])).toBeNull();
    expect((await deploymentOf(d.deploymentId)).status).toBe('done');
  });

  it('end in error with the reason, and cancelled leaves the application as it was', async () => {
    const failed = await queuedDeployment();
    await sendEvents([{ deploymentId: failed.deploymentId, sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason: 'image not found', logLines: lines('pull failed') }]);
    expect(await deploymentOf(failed.deploymentId)).toMatchObject({ status: 'error', reason: 'image not found' });
    expect(await appStatus(failed.applicationId)).toBe('error');
    const listed = await t.call('deployment.all', { applicationId: failed.applicationId });
    expect(listed.body[0]).toMatchObject({ status: 'error', reason: 'image not found' });

    const cancelled = await queuedDeployment();
    await t.call('application.update', { applicationId: cancelled.applicationId, applicationStatus: 'done' });
    await sendEvents([{ deploymentId: cancelled.deploymentId, sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED, reason: 'cancelled by the user' }]);
    expect(await deploymentOf(cancelled.deploymentId)).toMatchObject({ status: 'cancelled', reason: 'cancelled by the user' });
    expect(await appStatus(cancelled.applicationId)).toBe('done');
  });

  it('refuse a deployment of another server or an unknown one, keeping what came before', async () => {
    const server = (await t.call('server.create', { name: 'elsewhere', address: '203.0.113.30' })).body;
    const theirs = await queuedDeployment(server.serverId);
    const mine = await queuedDeployment();
    const err = await sendEvents([
      { deploymentId: mine.deploymentId, sequence: '1', logLines: lines('mine') },
      { deploymentId: theirs.deploymentId, sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING },
    ]);
    expect(err?.code).toBe(status.NOT_FOUND);
    expect(await deploymentOf(theirs.deploymentId)).toMatchObject({ status: 'queued', lastSequence: 0 });
    expect((await deploymentOf(mine.deploymentId)).log).toBe('mine\n');
    expect((await sendEvents([{ deploymentId: 'dep_unknown', sequence: '1' }]))?.code).toBe(status.NOT_FOUND);
    expect((await sendEvents([{ deploymentId: mine.deploymentId, sequence: '0' }]))?.code).toBe(status.INVALID_ARGUMENT);
  });

  it('refuse a missing or unknown credential', async () => {
    const d = await queuedDeployment();
    const event = { deploymentId: d.deploymentId, sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING };
    expect((await sendEvents([event], auth(randomBytes(32).toString('base64url'))))?.code).toBe(status.UNAUTHENTICATED);
    expect((await sendEvents([event], new Metadata()))?.code).toBe(status.UNAUTHENTICATED);
    expect((await sendResult({ commandId: d.commandId }, auth('not-the-credential-at-all')))?.code).toBe(status.UNAUTHENTICATED);
    expect(await deploymentOf(d.deploymentId)).toMatchObject({ status: 'queued', lastSequence: 0 });
  });
});

describe('command results', () => {
  it('mark the command, and a failed deploy command ends its deployment in error', async () => {
    const d = await queuedDeployment();
    expect(await sendResult({ commandId: d.commandId, status: CommandStatus.COMMAND_STATUS_EXPIRED, reason: 'deadline passed before start' })).toBeNull();
    const command = await t.db.selectFrom('commands').selectAll().where('id', '=', d.commandId).executeTakeFirstOrThrow();
    expect(command).toMatchObject({ status: 'failed', resultReason: 'deadline passed before start' });
    expect(command.finishedAt).not.toBeNull();
    expect(await deploymentOf(d.deploymentId)).toMatchObject({ status: 'error', reason: 'deadline passed before start' });
    expect(await appStatus(d.applicationId)).toBe('error');

    // Sent again (the agent re-reports from its journal): nothing changes.
    expect(await sendResult({ commandId: d.commandId, status: CommandStatus.COMMAND_STATUS_SUCCEEDED })).toBeNull();
    expect((await t.db.selectFrom('commands').select('status').where('id', '=', d.commandId).executeTakeFirstOrThrow()).status).toBe('failed');
  });

  it('leave a deployment the events already ended as it is', async () => {
    const d = await queuedDeployment();
    await sendEvents([{ deploymentId: d.deploymentId, sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_DONE }]);
    expect(await sendResult({ commandId: d.commandId, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'late' })).toBeNull();
    expect(await deploymentOf(d.deploymentId)).toMatchObject({ status: 'done', reason: null });
    const ok = await queuedDeployment();
    expect(await sendResult({ commandId: ok.commandId, status: CommandStatus.COMMAND_STATUS_SUCCEEDED })).toBeNull();
    expect((await t.db.selectFrom('commands').select(['status', 'resultReason']).where('id', '=', ok.commandId).executeTakeFirstOrThrow())).toEqual({ status: 'done', resultReason: null });
  });

  it('refuse a command of another server and a result without status', async () => {
    const server = (await t.call('server.create', { name: 'other', address: '203.0.113.31' })).body;
    const theirs = await queuedDeployment(server.serverId);
    expect((await sendResult({ commandId: theirs.commandId, status: CommandStatus.COMMAND_STATUS_FAILED }))?.code).toBe(status.NOT_FOUND);
    expect(await deploymentOf(theirs.deploymentId)).toMatchObject({ status: 'queued' });
    const mine = await queuedDeployment();
    expect((await sendResult({ commandId: mine.commandId, status: CommandStatus.COMMAND_STATUS_UNSPECIFIED }))?.code).toBe(status.INVALID_ARGUMENT);
  });
});

describe('register and heartbeat', () => {
  it('answer the local agent with its server id and the time, and refuse strangers', async () => {
    const registered = await new Promise<{ err: ServiceError | null; res: unknown }>((resolve) =>
      client.register(
        { serverId: '', agentVersion: '0.0.0', hostname: 'h', dockerVersion: '', credential: { $case: 'serverCredential', value: credential } },
        (err, res) => resolve({ err, res }),
      ),
    );
    expect(registered.err).toBeNull();
    expect(registered.res).toMatchObject({ serverId: 'local', serverCredential: '', heartbeatIntervalSeconds: 15 });

    const beat = await new Promise<{ err: ServiceError | null; res: { serverTime?: { seconds: string } } | undefined }>((resolve) =>
      client.heartbeat({ sentAt: timestampFromDate(new Date()) }, auth(), (err, res) => resolve({ err, res })),
    );
    expect(beat.err).toBeNull();
    expect(Math.abs(Number(beat.res?.serverTime?.seconds) - Date.now() / 1000)).toBeLessThan(60);

    const stranger = await new Promise<ServiceError | null>((resolve) =>
      client.heartbeat({ sentAt: undefined }, auth(randomBytes(32).toString('base64url')), (err) => resolve(err)),
    );
    expect(stranger?.code).toBe(status.UNAUTHENTICATED);
    const joining = await new Promise<ServiceError | null>((resolve) =>
      client.register({ serverId: '', agentVersion: '0.0.0', hostname: 'h', dockerVersion: '', credential: { $case: 'joinToken', value: 'jt' } }, (err) => resolve(err)),
    );
    expect(joining?.code).toBe(status.UNAUTHENTICATED);
  });
});
