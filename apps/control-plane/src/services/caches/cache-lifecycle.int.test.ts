// cache.deploy / rebuild / start / stop / reload / remove / saveExternalPort on a real
// Postgres: the commands they write to the outbox, what they refuse, and what the agent's
// reports (applied as the report server applies them) do to the instance.
import { Command, CommandKind, CommandStatus, DeploymentStatus, WorkloadKind, timestampToDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { REDIS_START_SCRIPT, cacheVolumeName } from './cache-spec.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { sentSpec } from '../../testing/sent-spec.js';

/** What an operation that queued a command answers. */
const QUEUED = { commandId: expect.stringMatching(/^cmd_/), status: 'queued' };

let t: TestPlatform;
let reports: DeploymentReports;
let env: string;

beforeAll(async () => {
  t = await startTestPlatform();
  t.watch.secret(PASSWORD);
  reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
  env = (await t.call('project.create', { name: 'cache-lifecycle' })).body.environments[0].environmentId;
});
// close() fails the file when the cache password is in the control plane's log or a deployment log.
afterAll(() => t?.close());

const PASSWORD = 'pa ss"$(word)';

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

const refused = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(400);
  return r.body as { message: string; issues: { path: string[]; message: string }[] };
};

async function cache(options: { deployed?: boolean; serverId?: string | null } = {}) {
  const c = await ok('cache.create', { name: 'sessions', databasePassword: PASSWORD, environmentId: env, serverId: options.serverId ?? null });
  if (options.deployed) await ok('cache.deploy', { cacheId: c.cacheId });
  return c as { cacheId: string; appName: string };
}

/** The instance's command rows, oldest first. */
const commandsOf = async (cacheId: string) =>
  (await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `cache:${cacheId}`).execute()).sort(
    (a, b) => Number(a.position) - Number(b.position),
  );
const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));
const kinds = async (cacheId: string) => (await commandsOf(cacheId)).map((r) => r.kind);
const status = async (cacheId: string) => (await ok('cache.one', { cacheId })).applicationStatus;
const result = (commandId: string, s: CommandStatus, reason = '') =>
  reports.applyCommandResult('local', { commandId, status: s, reason, finishedAt: undefined });

const deployOf = (row: { payload: string }) => {
  const command = decode(row.payload);
  if (command.payload?.$case !== 'deployApplication') throw new Error(`not a deploy: ${command.payload?.$case}`);
  return { command, deploy: command.payload.value, spec: sentSpec(command.payload.value) };
};

describe('cache.deploy', () => {
  it('queues a DeployApplication of kind CACHE: image, password and variables in env, the volume, the port; status running', async () => {
    const c = await cache();
    await ok('cache.update', { cacheId: c.cacheId, env: 'TZ=UTC\nREDIS_PASSWORD=not-this-one', memoryLimit: '268435456' });
    await ok('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 16380 });
    const before = Date.now();
    expect(await ok('cache.deploy', { cacheId: c.cacheId })).toEqual(QUEUED);

    const rows = await commandsOf(c.cacheId);
    expect(rows.map((r) => [r.kind, r.status, r.serverId, r.deploymentId])).toEqual([['COMMAND_KIND_DEPLOY_APPLICATION', 'pending', 'local', null]]);
    const { command, deploy, spec } = deployOf(rows[0]!);
    expect(command).toMatchObject({ kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION, workloadKey: `cache:${c.cacheId}`, serverId: 'local' });
    expect(deploy.workload).toEqual({ kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: c.cacheId, appName: c.appName });
    expect(deploy.deploymentId).toMatch(/^dep_/);
    expect(deploy.image).toBe('redis:8');
    expect(deploy.env).toEqual({ TZ: 'UTC', REDIS_PASSWORD: PASSWORD });
    expect(deploy.source).toBeUndefined();
    expect(spec).toMatchObject({
      kind: 'cache',
      id: c.cacheId,
      appName: c.appName,
      args: ['/bin/sh', '-c', REDIS_START_SCRIPT, 'sh', '--dir', '/data', '--appendonly', 'yes'],
      memoryLimit: '268435456',
      ports: [{ Protocol: 'tcp', TargetPort: 6379, PublishedPort: 16380, PublishMode: 'host' }],
      volumes: [{ source: cacheVolumeName(c.cacheId), target: '/data' }],
      forceUpdate: 1,
    });
    expect(JSON.stringify(deploy.spec)).not.toContain(PASSWORD);
    const deadline = timestampToDate(command.deadline!).getTime();
    expect(deadline).toBeGreaterThanOrEqual(before + 15 * 60_000 - 1000);
    expect(await status(c.cacheId)).toBe('running');

    // A second deploy: a new rollout id and a higher forceUpdate.
    await ok('cache.deploy', { cacheId: c.cacheId });
    const second = deployOf((await commandsOf(c.cacheId))[1]!);
    expect(second.deploy.deploymentId).not.toBe(deploy.deploymentId);
    expect(second.spec.forceUpdate).toBe(2);
  });

  it("goes to the instance's server", async () => {
    const server = await ok('server.create', { name: 'cache-host', address: '203.0.113.7' });
    const c = await cache({ serverId: server.serverId, deployed: true });
    const [row] = await commandsOf(c.cacheId);
    expect(row!.serverId).toBe(server.serverId);
    expect(decode(row!.payload).serverId).toBe(server.serverId);
  });

  it('refuses, writing nothing, settings the agent would refuse and env references that do not resolve', async () => {
    const c = await cache();
    await ok('cache.update', { cacheId: c.cacheId, env: 'URL=${{project.MISSING}}' });
    const badEnv = await refused('cache.deploy', { cacheId: c.cacheId });
    expect(badEnv.issues[0]!.path).toEqual(['env']);
    await ok('cache.update', { cacheId: c.cacheId, env: null, memoryLimit: '1000' });
    expect((await refused('cache.deploy', { cacheId: c.cacheId })).message).toMatch(/^Cannot deploy .*memoryLimit must be at least/);
    expect(await commandsOf(c.cacheId)).toEqual([]);
    expect(await status(c.cacheId)).toBe('idle');
  });

  it('moves the status with the results: done, or error', async () => {
    const c = await cache({ deployed: true });
    const [first] = await commandsOf(c.cacheId);
    expect(await result(first!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBe('applied');
    expect(await status(c.cacheId)).toBe('done');
    await ok('cache.deploy', { cacheId: c.cacheId });
    const second = (await commandsOf(c.cacheId))[1]!;
    expect(await result(second.id, CommandStatus.COMMAND_STATUS_FAILED, 'No such image: redis:8')).toBe('applied');
    expect(await status(c.cacheId)).toBe('error');
    expect((await commandsOf(c.cacheId))[1]!.resultReason).toBe('No such image: redis:8');
  });

  it("takes the deploy's events and sets them aside (a cache keeps no deployment records)", async () => {
    const c = await cache({ deployed: true });
    const [row] = await commandsOf(c.cacheId);
    const event = {
      deploymentId: deployOf(row!).deploy.deploymentId,
      commandId: row!.id,
      sequence: '1',
      status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING,
      logLines: [{ time: undefined, text: 'Deploying image redis:8' }],
      reason: '',
      occurredAt: undefined,
    };
    expect(await reports.applyEvent('local', event)).toBe('applied');
    // Another server's agent learns nothing.
    await expect(reports.applyEvent('srv_other', event)).rejects.toThrow(/no deployment/);
  });

  it('removes the service of an earlier appName before deploying under the new one', async () => {
    const c = await cache({ deployed: true });
    await ok('cache.update', { cacheId: c.cacheId, appName: `${c.appName}-renamed` });
    await ok('cache.deploy', { cacheId: c.cacheId });
    const rows = await commandsOf(c.cacheId);
    expect(rows.map((r) => r.kind)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_REMOVE_WORKLOAD', 'COMMAND_KIND_DEPLOY_APPLICATION']);
    expect(decode(rows[1]!.payload).payload).toEqual({
      $case: 'removeWorkload',
      value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: c.cacheId, appName: `${c.appName}-renamed` }, removeVolumes: false },
    });
    expect(deployOf(rows[2]!).deploy.workload?.appName).toBe(`${c.appName}-renamed`);
  });
});

describe('cache.stop, start and reload', () => {
  it('write their command of kind CACHE after the deploy, answer {}, and move the status with their results', async () => {
    const c = await cache({ deployed: true });
    expect(await ok('cache.stop', { cacheId: c.cacheId })).toEqual(QUEUED);
    expect(await ok('cache.start', { cacheId: c.cacheId })).toEqual(QUEUED);
    expect(await ok('cache.reload', { cacheId: c.cacheId, appName: c.appName })).toEqual(QUEUED);
    const rows = await commandsOf(c.cacheId);
    expect(rows.map((r) => r.kind)).toEqual([
      'COMMAND_KIND_DEPLOY_APPLICATION',
      'COMMAND_KIND_STOP_WORKLOAD',
      'COMMAND_KIND_START_WORKLOAD',
      'COMMAND_KIND_RELOAD_WORKLOAD',
    ]);
    const workload = { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: c.cacheId, appName: c.appName };
    const [deploy, stop, start, reload] = rows;
    expect(decode(stop!.payload).payload).toEqual({ $case: 'stopWorkload', value: { workload } });
    expect(decode(start!.payload).payload).toEqual({ $case: 'startWorkload', value: { workload } });
    expect(decode(reload!.payload).payload).toEqual({ $case: 'reloadWorkload', value: { workload } });

    await result(deploy!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    await result(stop!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await status(c.cacheId)).toBe('idle');
    await result(start!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await status(c.cacheId)).toBe('done');
    await result(reload!.id, CommandStatus.COMMAND_STATUS_CANCELLED, 'cleaned');
    expect(await status(c.cacheId)).toBe('done');
    await ok('cache.reload', { cacheId: c.cacheId, appName: c.appName });
    await result((await commandsOf(c.cacheId)).at(-1)!.id, CommandStatus.COMMAND_STATUS_EXPIRED);
    expect(await status(c.cacheId)).toBe('error');
  });

  it('are refused for an instance that was never deployed, and reload for another appName, writing nothing', async () => {
    const c = await cache();
    for (const [op, input] of [
      ['cache.stop', { cacheId: c.cacheId }],
      ['cache.start', { cacheId: c.cacheId }],
      ['cache.reload', { cacheId: c.cacheId, appName: c.appName }],
    ] as const) {
      expect((await refused(op, input)).message, op).toBe(`Cache instance ${c.appName} was never deployed: deploy it first (cache.deploy)`);
    }
    await ok('cache.deploy', { cacheId: c.cacheId });
    expect((await refused('cache.reload', { cacheId: c.cacheId, appName: 'someone-else' })).issues[0]!.path).toEqual(['appName']);
    expect(await kinds(c.cacheId)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION']);
  });

  it('answer NOT_FOUND for an unknown instance', async () => {
    for (const op of ['cache.deploy', 'cache.rebuild', 'cache.stop', 'cache.start', 'cache.remove']) {
      expect((await t.call(op, { cacheId: 'rds_missing' })).status, op).toBe(404);
    }
  });
});

describe('cache.rebuild', () => {
  it('removes the service keeping the volume, then deploys again; the removal does not remove the record', async () => {
    const c = await cache({ deployed: true });
    expect(await ok('cache.rebuild', { cacheId: c.cacheId })).toEqual(QUEUED);
    const rows = await commandsOf(c.cacheId);
    expect(rows.map((r) => r.kind)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_REMOVE_WORKLOAD', 'COMMAND_KIND_DEPLOY_APPLICATION']);
    expect(decode(rows[1]!.payload).payload).toMatchObject({ $case: 'removeWorkload', value: { removeVolumes: false } });
    expect(await status(c.cacheId)).toBe('running');
    // Work on it is still accepted: it is not being removed.
    await ok('cache.stop', { cacheId: c.cacheId });

    await result(rows[0]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    await result(rows[1]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect((await t.call('cache.one', { cacheId: c.cacheId })).status).toBe(200);
    await result(rows[2]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await status(c.cacheId)).toBe('done');
  });
});

describe('cache.remove', () => {
  it('removes an instance that was never deployed at once', async () => {
    const c = await cache();
    expect((await ok('cache.remove', { cacheId: c.cacheId })).cacheId).toBe(c.cacheId);
    expect((await t.call('cache.one', { cacheId: c.cacheId })).status).toBe(404);
    expect(await commandsOf(c.cacheId)).toEqual([]);
  });

  it('queues the removal of the service and its volume; the record goes when the agent reports it done', async () => {
    const c = await cache({ deployed: true });
    expect((await ok('cache.remove', { cacheId: c.cacheId })).cacheId).toBe(c.cacheId);
    const rows = await commandsOf(c.cacheId);
    expect(decode(rows[1]!.payload).payload).toEqual({
      $case: 'removeWorkload',
      value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: c.cacheId, appName: c.appName }, removeVolumes: true },
    });
    expect(timestampToDate(decode(rows[1]!.payload).deadline!).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);

    // Being removed: a repeated remove writes nothing, other work is refused.
    await ok('cache.remove', { cacheId: c.cacheId });
    for (const [op, input] of [
      ['cache.deploy', { cacheId: c.cacheId }],
      ['cache.rebuild', { cacheId: c.cacheId }],
      ['cache.stop', { cacheId: c.cacheId }],
      ['cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 16390 }],
    ] as const) {
      expect((await refused(op, input)).message, op).toBe(`Cache instance ${c.appName} is being removed`);
    }
    expect(await kinds(c.cacheId)).toHaveLength(2);
    expect((await ok('cache.one', { cacheId: c.cacheId })).externalPort).toBeNull();

    await result(rows[1]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect((await t.call('cache.one', { cacheId: c.cacheId })).status).toBe(404);
  });

  it('leaves the record in error when the removal fails, and can be asked again', async () => {
    const c = await cache({ deployed: true });
    await ok('cache.remove', { cacheId: c.cacheId });
    await result((await commandsOf(c.cacheId))[1]!.id, CommandStatus.COMMAND_STATUS_FAILED, 'volume still in use');
    expect(await status(c.cacheId)).toBe('error');
    await ok('cache.remove', { cacheId: c.cacheId });
    expect(await kinds(c.cacheId)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_REMOVE_WORKLOAD', 'COMMAND_KIND_REMOVE_WORKLOAD']);
  });

  it('is queued for the deployed instances of a removed project, its data volume kept and named in the answer', async () => {
    const project = (await t.call('project.create', { name: 'cache-doomed' })).body;
    const e = project.environments[0].environmentId;
    const deployed = await ok('cache.create', { name: 'a', databasePassword: PASSWORD, environmentId: e });
    await ok('cache.deploy', { cacheId: deployed.cacheId });
    const never = await ok('cache.create', { name: 'b', databasePassword: PASSWORD, environmentId: e });
    const answer = await ok('project.remove', { projectId: project.projectId });
    expect(answer.kept).toEqual([
      {
        kind: 'volume',
        name: cacheVolumeName(deployed.cacheId),
        appName: deployed.appName,
        serverId: null,
        reason: 'volumes are kept unless deleteVolumes is true',
      },
    ]);
    const rows = await commandsOf(deployed.cacheId);
    expect(rows.map((r) => r.kind)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_REMOVE_WORKLOAD']);
    expect(decode(rows[1]!.payload).payload).toMatchObject({ $case: 'removeWorkload', value: { removeVolumes: false } });
    expect(await commandsOf(never.cacheId)).toEqual([]);
    // The record went with the project; the result finds nothing left to delete.
    expect(await result(rows[1]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBe('applied');
  });

  it('removes the data volume with the project when deleteVolumes is true', async () => {
    const project = (await t.call('project.create', { name: 'cache-wiped' })).body;
    const deployed = await ok('cache.create', { name: 'a', databasePassword: PASSWORD, environmentId: project.environments[0].environmentId });
    await ok('cache.deploy', { cacheId: deployed.cacheId });
    const answer = await ok('project.remove', { projectId: project.projectId, deleteVolumes: true });
    expect(answer.kept).toEqual([]);
    const rows = await commandsOf(deployed.cacheId);
    expect(decode(rows[1]!.payload).payload).toMatchObject({ $case: 'removeWorkload', value: { removeVolumes: true } });
  });
});

describe('cache.saveExternalPort', () => {
  it('only saves the port of an instance never deployed', async () => {
    const c = await cache();
    expect((await ok('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 16391 })).externalPort).toBe(16391);
    expect(await commandsOf(c.cacheId)).toEqual([]);
  });

  it('deploys a deployed instance again so the port applies, and null unpublishes it', async () => {
    const c = await cache({ deployed: true });
    expect((await ok('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 16392 })).externalPort).toBe(16392);
    expect(deployOf((await commandsOf(c.cacheId))[1]!).spec.ports).toEqual([
      { Protocol: 'tcp', TargetPort: 6379, PublishedPort: 16392, PublishMode: 'host' },
    ]);
    await ok('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: null });
    expect(deployOf((await commandsOf(c.cacheId))[2]!).spec.ports).toBeUndefined();
    expect(await status(c.cacheId)).toBe('running');
  });

  it('refuses, changing nothing, a port the deploy would refuse or another instance publishes', async () => {
    const c = await cache({ deployed: true });
    await ok('cache.update', {
      cacheId: c.cacheId,
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 6379, PublishedPort: 16393, PublishMode: 'host' }] },
    });
    expect((await refused('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 16393 })).message).toMatch(/^Cannot deploy/);
    const other = await cache();
    await ok('cache.saveExternalPort', { cacheId: other.cacheId, externalPort: 16394 });
    expect((await refused('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 16394 })).issues[0]!.path).toEqual(['externalPort']);
    expect((await refused('cache.saveExternalPort', { cacheId: c.cacheId, externalPort: 70000 })).issues[0]!.path).toEqual(['externalPort']);
    expect((await ok('cache.one', { cacheId: c.cacheId })).externalPort).toBeNull();
    expect(await kinds(c.cacheId)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION']);
  });
});
