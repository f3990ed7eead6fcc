// dbA..dbE on a real Postgres: records, validation, permissions, write-only credentials,
// connection strings, the commands deploy/stop/start/remove write, and removal with the project.
import { contractsByName } from '@skiff/contracts';
import { Command, CommandStatus, WorkloadKind } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { sentSpec } from '../../testing/sent-spec.js';
import { databaseVolumeName } from './database-spec.js';

const PASSWORD = 'pa ss"$(word)';
let t: TestPlatform;
let reports: DeploymentReports;
let env: string;
let projectId: string;

beforeAll(async () => {
  t = await startTestPlatform();
  t.watch.secret(PASSWORD);
  reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
  const project = (await t.call('project.create', { name: 'databases' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
// close() fails the file when a password is in the control plane's log.
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>, call = t.call) => {
  const r = await call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};
const badField = async (op: string, input: Record<string, unknown>, field: string) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(400);
  expect(r.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
};
const commandsOf = async (id: string) =>
  (await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `database:${id}`).execute()).sort((a, b) => Number(a.position) - Number(b.position));
const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));

describe('database records', () => {
  it('creates each engine with its default image, generated write-only credentials and its connection strings', async () => {
    const cases = [
      ['dbA', 'postgres:17', 'postgresql://app@NAME:5432/app'],
      ['dbB', 'mariadb:11', 'mysql://app@NAME:3306/app'],
      ['dbC', 'mysql:8', 'mysql://app@NAME:3306/app'],
      ['dbD', 'mongo:7', 'mongodb://app@NAME:27017/app?authSource=admin'],
      ['dbE', 'ghcr.io/tursodatabase/libsql-server', 'http://app@NAME:8080'],
    ] as const;
    for (const [router, image, url] of cases) {
      const db = await ok(`${router}.create`, { name: 'Orders', environmentId: env });
      const Record = (contractsByName.get(`${router}.one`)!.output as z.ZodObject).strict();
      expect(Record.safeParse(db).success, JSON.stringify(Record.safeParse(db).error?.issues)).toBe(true);
      expect(db).toMatchObject({ containerImage: image, hasDatabasePassword: true, applicationStatus: 'idle', externalConnectionUrl: null });
      expect(db.internalConnectionUrl).toBe(url.replace('NAME', db.appName));
      expect(db.hasRootPassword).toBe(router === 'dbB' || router === 'dbC');
      const id = db[`${router}Id`];
      expect(id).toMatch(/^dbs_/);
      const row = await t.db.selectFrom('databaseServices').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const password = t.platform.secrets.open(row.databasePassword);
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(JSON.stringify(db)).not.toContain(password);
      expect(await ok(`${router}.one`, { [`${router}Id`]: id })).toEqual(db);
    }
    const environment = await ok('environment.one', { environmentId: env });
    expect(environment.services.filter((s: { type: string }) => s.type === 'database').length).toBeGreaterThanOrEqual(5);
  });

  it('keeps a given password write-only and sealed; the external string names the server and port', async () => {
    const server = await ok('server.create', { name: 'db-host', address: '203.0.113.9' });
    const db = await ok('dbA.create', { name: 'pg', environmentId: env, serverId: server.serverId, databaseName: 'shop', databaseUser: 'shop', databasePassword: PASSWORD });
    const row = await t.db.selectFrom('databaseServices').selectAll().where('id', '=', db.dbAId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    const published = await ok('dbA.saveExternalPort', { dbAId: db.dbAId, externalPort: 15432 });
    expect(published.externalConnectionUrl).toBe('postgresql://shop@203.0.113.9:15432/shop');
    const changed = await ok('dbA.update', { dbAId: db.dbAId, databasePassword: 'another-one' });
    expect(changed).not.toHaveProperty('databasePassword');
    const after = await t.db.selectFrom('databaseServices').selectAll().where('id', '=', db.dbAId).executeTakeFirstOrThrow();
    expect(t.platform.secrets.open(after.databasePassword)).toBe('another-one');
  });

  it('refuses bad input naming the field, writing nothing', async () => {
    await badField('dbA.create', { name: 'x', environmentId: env, databaseName: 'a-b; drop' }, 'databaseName');
    await badField('dbA.create', { name: 'x', environmentId: env, databaseUser: '1user' }, 'databaseUser');
    await badField('dbA.create', { name: 'x', environmentId: env, rootPassword: 'r' }, 'rootPassword');
    await badField('dbB.create', { name: 'x', environmentId: env, replicaSet: true }, 'replicaSet');
    await badField('dbC.create', { name: 'x', environmentId: env, databaseUser: 'root' }, 'databaseUser');
    await badField('dbE.create', { name: 'x', environmentId: env, databaseName: 'main' }, 'databaseName');
    await badField('dbA.create', { name: 'x', environmentId: env, databasePassword: '' }, 'databasePassword');
    await badField('dbA.create', { name: 'x', environmentId: env, containerImage: 'not an image' }, 'containerImage');
    const before = await t.db.selectFrom('databaseServices').select('id').where('name', '=', 'x').execute();
    expect(before).toEqual([]);
    const a = await ok('dbA.create', { name: 'ports', environmentId: env });
    const b = await ok('dbA.create', { name: 'ports', environmentId: env });
    await ok('dbA.saveExternalPort', { dbAId: a.dbAId, externalPort: 25432 });
    await badField('dbA.saveExternalPort', { dbAId: b.dbAId, externalPort: 25432 }, 'externalPort');
    await badField('dbA.update', { dbAId: b.dbAId, externalPort: 70000 }, 'externalPort');
    await badField('dbA.update', { dbAId: b.dbAId, appName: a.appName }, 'appName');
    // Another engine's router does not see it.
    expect((await t.call('dbB.one', { dbBId: a.dbAId })).status).toBe(404);
    expect((await t.call('dbB.remove', { dbBId: a.dbAId })).status).toBe(404);
  });

  it('follows the service permission rules and organization isolation', async () => {
    const db = await ok('dbA.create', { name: 'guarded', environmentId: env });
    const member = await addMember(t, 'db-member@example.com');
    const m = t.as(member.key);
    expect((await m('dbA.one', { dbAId: db.dbAId })).status).toBe(403);
    expect((await m('dbA.create', { name: 'mine', environmentId: env })).status).toBe(403);
    await t.call('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [db.dbAId] });
    expect((await m('dbA.one', { dbAId: db.dbAId })).status).toBe(200);
    expect((await m('dbA.remove', { dbAId: db.dbAId })).status).toBe(403);
    const org = await t.call('organization.create', { name: 'Db Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.body.organizationId } })).body.key;
    expect((await t.as(key)('dbA.one', { dbAId: db.dbAId })).status).toBe(404);
  });
});

describe('database lifecycle', () => {
  it('deploys as the cache workload kind with the engine variables over env, its volume, port and health check', async () => {
    const db = await ok('dbA.create', { name: 'deployed', environmentId: env, databasePassword: PASSWORD, databaseName: 'shop', databaseUser: 'shop' });
    await ok('dbA.update', { dbAId: db.dbAId, env: 'TZ=UTC\nPOSTGRES_PASSWORD=not-this-one' });
    await ok('dbA.saveExternalPort', { dbAId: db.dbAId, externalPort: 35432 });
    await ok('dbA.deploy', { dbAId: db.dbAId });
    const [row] = await commandsOf(db.dbAId);
    const command = decode(row!.payload);
    if (command.payload?.$case !== 'deployApplication') throw new Error('not a deploy');
    const deploy = command.payload.value;
    expect(deploy.workload).toEqual({ kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: db.dbAId, appName: db.appName });
    expect(deploy.image).toBe('postgres:17');
    expect(deploy.env).toEqual({ TZ: 'UTC', POSTGRES_PASSWORD: PASSWORD, POSTGRES_USER: 'shop', POSTGRES_DB: 'shop' });
    expect(JSON.stringify(deploy.spec)).not.toContain(PASSWORD);
    expect(sentSpec(deploy)).toMatchObject({
      ports: [{ Protocol: 'tcp', TargetPort: 5432, PublishedPort: 35432, PublishMode: 'host' }],
      volumes: [{ source: databaseVolumeName(db.dbAId), target: '/var/lib/postgresql/data' }],
      healthCheckCluster: { Test: ['CMD', 'pg_isready', '-h', '127.0.0.1', '-U', 'shop', '-d', 'shop'] },
    });
    expect((await ok('dbA.one', { dbAId: db.dbAId })).applicationStatus).toBe('running');
    await reports.applyCommandResult('local', { commandId: row!.id, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });
    expect((await ok('dbA.one', { dbAId: db.dbAId })).applicationStatus).toBe('done');

    await ok('dbA.stop', { dbAId: db.dbAId });
    await ok('dbA.start', { dbAId: db.dbAId });
    await ok('dbA.reload', { dbAId: db.dbAId, appName: db.appName });
    await badField('dbA.reload', { dbAId: db.dbAId, appName: 'someone-else' }, 'appName');
    expect((await commandsOf(db.dbAId)).map((r) => r.kind)).toEqual([
      'COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_STOP_WORKLOAD', 'COMMAND_KIND_START_WORKLOAD', 'COMMAND_KIND_RELOAD_WORKLOAD',
    ]);
  });

  it('refuses start/stop before a deploy; removes with or without the volume, the record going when the agent is done', async () => {
    const never = await ok('dbB.create', { name: 'never', environmentId: env });
    expect((await t.call('dbB.start', { dbBId: never.dbBId })).status).toBe(400);
    await ok('dbB.remove', { dbBId: never.dbBId });
    expect((await t.call('dbB.one', { dbBId: never.dbBId })).status).toBe(404);

    for (const deleteVolume of [true, false]) {
      const db = await ok('dbB.create', { name: 'going', environmentId: env });
      await ok('dbB.deploy', { dbBId: db.dbBId });
      await ok('dbB.remove', { dbBId: db.dbBId, deleteVolume });
      const rows = await commandsOf(db.dbBId);
      const remove = decode(rows[1]!.payload);
      expect(remove.payload).toMatchObject({ $case: 'removeWorkload', value: { removeVolumes: deleteVolume } });
      expect((await t.call('dbB.deploy', { dbBId: db.dbBId })).status).toBe(400);
      await reports.applyCommandResult('local', { commandId: rows[1]!.id, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });
      expect((await t.call('dbB.one', { dbBId: db.dbBId })).status).toBe(404);
    }
  });

  it('goes with its project (a remove command queued, counted) and is copied with its environment', async () => {
    const project = await ok('project.create', { name: 'db-doomed' });
    const envId = project.environments[0].environmentId;
    const db = await ok('dbD.create', { name: 'mongo', environmentId: envId, replicaSet: true });
    await ok('dbD.saveExternalPort', { dbDId: db.dbDId, externalPort: 37017 });
    const copy = await ok('environment.duplicate', { environmentId: envId, name: 'copy' });
    const copied = await t.db.selectFrom('databaseServices').selectAll().where('environmentId', '=', copy.environmentId).execute();
    expect(copied.map((r) => [r.engine, r.replicaSet, r.externalPort, r.applicationStatus])).toEqual([['mongo', true, null, 'idle']]);
    await ok('dbD.deploy', { dbDId: db.dbDId });
    const removed = await ok('project.remove', { projectId: project.projectId });
    expect(removed.removed).toMatchObject({ databases: 2 });
    expect((await commandsOf(db.dbDId)).map((r) => r.kind)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_REMOVE_WORKLOAD']);
  });
});
