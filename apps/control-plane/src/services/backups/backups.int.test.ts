import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type Call, type TestPlatform } from '../../testing/harness.js';
import { openBackupMetadata } from './backup-metadata.js';

let t: TestPlatform;
let env: string;
let projectId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'data' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const ok = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const badField = (res: { status: number; body: any }, field: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('BAD_REQUEST');
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
};

const destinationInput = {
  name: 'offsite',
  endpoint: 'https://s3.eu-west-1.amazonaws.com',
  region: 'eu-west-1',
  bucket: 'acme-backups',
  accessKey: 'AKIA-ACCESS-0001',
  secretKey: 'destination-secret-0001',
};
const newDestination = async (overrides: Record<string, unknown> = {}, call: Call = t.call) =>
  ok(await call('destination.create', { ...destinationInput, ...overrides }));
/** A database service of the router's engine; `id` is its `<router>Id`. */
const newDb = async (name = 'db', router = 'dbA') => {
  const created = ok(await t.call(`${router}.create`, { name, environmentId: env }));
  return { ...created, id: created[`${router}Id`] as string };
};
const newCompose = async (name = 'stack') => ok(await t.call('compose.create', { name, environmentId: env }));

const backupInput = (destinationId: string, target: Record<string, unknown>) => ({
  schedule: '0 3 * * *',
  prefix: 'nightly',
  destinationId,
  database: 'shop',
  keepLatestCount: 7,
  ...target,
});

describe('destinations', () => {
  it('creates, reads, lists, updates and removes, keeping keys sealed and the secret write-only', async () => {
    const d = await newDestination();
    const { secretKey: _secret, ...shown } = destinationInput;
    expect(d).toMatchObject({ ...shown, hasSecretKey: true, organizationId: t.organizationId });
    expect(d).not.toHaveProperty('secretKey');
    expect(d.destinationId).toMatch(/^dst_/);
    expect(ok(await t.call('destination.one', { destinationId: d.destinationId }))).toEqual(d);
    expect(ok(await t.call('destination.all'))).toContainEqual(d);
    const row = await t.db.selectFrom('destinations').selectAll().where('id', '=', d.destinationId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('destination-secret-0001');
    expect(JSON.stringify(row)).not.toContain('AKIA-ACCESS-0001');

    const renamed = ok(await t.call('destination.update', { destinationId: d.destinationId, name: 'moved', bucket: 'acme-backups-2' }));
    expect(renamed).toEqual({ ...d, name: 'moved', bucket: 'acme-backups-2' });
    const kept = await t.db.selectFrom('destinations').selectAll().where('id', '=', d.destinationId).executeTakeFirstOrThrow();
    expect(t.platform.secrets.open(kept.secretKey)).toBe('destination-secret-0001');
    const rotated = ok(await t.call('destination.update', { destinationId: d.destinationId, secretKey: 'rotated-secret-0002' }));
    expect(JSON.stringify(rotated)).not.toContain('rotated-secret-0002');
    const after = await t.db.selectFrom('destinations').selectAll().where('id', '=', d.destinationId).executeTakeFirstOrThrow();
    expect(t.platform.secrets.open(after.secretKey)).toBe('rotated-secret-0002');

    expect(ok(await t.call('destination.remove', { destinationId: d.destinationId })).destinationId).toBe(d.destinationId);
    expect((await t.call('destination.one', { destinationId: d.destinationId })).status).toBe(404);
  });

  it('refuses buckets S3 would refuse and endpoints that are not http(s) or point at metadata', async () => {
    for (const bucket of ['ab', 'My-Bucket', 'acme_backups', '-acme', 'acme-', 'acme..backups', '192.168.1.10', 'xn--acme', 'acme-s3alias', 'a'.repeat(64)]) {
      badField(await t.call('destination.create', { ...destinationInput, bucket }), 'bucket');
    }
    for (const bucket of ['abc', 'acme.backups.eu', '1-2-3', 'a'.repeat(63)]) await newDestination({ bucket });
    for (const endpoint of ['s3.example.com', 'ftp://s3.example.com', 'http://169.254.169.254', 'http://metadata.google.internal']) {
      badField(await t.call('destination.create', { ...destinationInput, endpoint }), 'endpoint');
    }
    await newDestination({ endpoint: 'http://127.0.0.1:9000' });
    const d = await newDestination();
    badField(await t.call('destination.update', { destinationId: d.destinationId, bucket: 'Bad_Bucket' }), 'bucket');
    expect(ok(await t.call('destination.one', { destinationId: d.destinationId }))).toEqual(d);
  });


  it('refuses removal while a backup uses it, and allows it once none does', async () => {
    const d = await newDestination();
    const app = await newDb();
    const b = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id })));
    badField(await t.call('destination.remove', { destinationId: d.destinationId }), 'destinationId');
    expect((await t.call('destination.one', { destinationId: d.destinationId })).status).toBe(200);
    ok(await t.call('backup.remove', { backupId: b.backupId }));
    ok(await t.call('destination.remove', { destinationId: d.destinationId }));
  });
});

describe('backup records', () => {
  it('creates, reads, updates and removes a database backup, normalising the prefix', async () => {
    const d = await newDestination();
    const app = await newDb();
    const created = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id, prefix: '  //nightly//eu/ ' })));
    expect(created).toMatchObject({
      destinationId: d.destinationId,
      organizationId: t.organizationId,
      schedule: '0 3 * * *',
      enabled: true,
      prefix: 'nightly/eu/',
      keepLatestCount: 7,
      database: 'shop',
      databaseType: 'dbA',
      backupType: 'database',
      dbAId: app.id,
      dbBId: null,
      composeId: null,
      serviceName: null,
      includeEncryptionKey: false,
      metadata: null,
    });
    expect(created.backupId).toMatch(/^bkp_/);
    expect(created.userId).toBeTruthy();
    expect(ok(await t.call('backup.one', { backupId: created.backupId }))).toEqual(created);

    const other = await newDestination({ name: 'second' });
    const updated = ok(
      await t.call('backup.update', {
        backupId: created.backupId,
        schedule: '@daily',
        enabled: false,
        prefix: '/',
        destinationId: other.destinationId,
        database: 'shop_eu',
        keepLatestCount: null,
        serviceName: null,
        metadata: { note: 'eu' },
        databaseType: 'dbA',
      }),
    );
    expect(updated).toEqual({
      ...created,
      schedule: '@daily',
      enabled: false,
      prefix: '',
      destinationId: other.destinationId,
      database: 'shop_eu',
      keepLatestCount: null,
      metadata: { note: 'eu' },
    });
    // enabled null keeps the current value.
    const same = ok(await t.call('backup.update', { ...updateOf(updated), enabled: null }));
    expect(same.enabled).toBe(false);
    expect(ok(await t.call('backup.one', { backupId: created.backupId }))).toEqual(same);

    expect(ok(await t.call('backup.remove', { backupId: created.backupId })).backupId).toBe(created.backupId);
    expect((await t.call('backup.one', { backupId: created.backupId })).status).toBe(404);
  });

  it('names exactly one target for each database type', async () => {
    const d = await newDestination();
    const fields = ['dbAId', 'dbBId', 'dbCId', 'dbDId', 'dbEId'];
    const dbs: Record<string, { id: string }> = {};
    for (const type of ['dbA', 'dbB', 'dbC', 'dbD', 'dbE']) dbs[type] = await newDb(`db-${type.toLowerCase()}`, type);
    const app = dbs.dbA!;
    for (const type of ['dbA', 'dbB', 'dbC', 'dbD']) {
      const own = `${type}Id`;
      const db = dbs[type]!;
      const b = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: type, [own]: db.id })));
      for (const f of fields) expect(b[f]).toBe(f === own ? db.id : null);
      // Missing its own id.
      badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: type })), own);
      // The id of another database type, alone or beside its own.
      const wrong = fields.find((f) => f !== own)!;
      badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: type, [wrong]: dbs[wrong.slice(0, 3)]!.id })), wrong);
      badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: type, [own]: db.id, [wrong]: dbs[wrong.slice(0, 3)]!.id })), wrong);
      // A compose stack beside it, or a service name.
      badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: type, [own]: db.id, composeId: 'cmp_x' })), 'composeId');
      badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: type, [own]: db.id, serviceName: 'db' })), 'serviceName');
    }
    // Explicit nulls for the other targets are fine.
    ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbB', dbAId: null, dbBId: dbs.dbB!.id, composeId: null, serviceName: null })));
    badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: 'app_missing' })), 'dbAId');
    const before = (await t.call('user.getBackups')).body.length;
    badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id, includeEncryptionKey: true })), 'includeEncryptionKey');
    expect((await t.call('user.getBackups')).body.length).toBe(before);
  });

  it('backs up a database inside a compose stack by composeId and serviceName, with sealed metadata', async () => {
    const d = await newDestination();
    const stack = await newCompose();
    const app = await newDb();
    const metadata = { dbB: { databaseUser: 'root', databasePassword: 'compose-meta-secret' } };
    const b = ok(
      await t.call('backup.create', backupInput(d.destinationId, { backupType: 'compose', databaseType: 'dbB', composeId: stack.composeId, serviceName: 'mariadb', metadata })),
    );
    expect(b).toMatchObject({ backupType: 'compose', databaseType: 'dbB', composeId: stack.composeId, serviceName: 'mariadb', dbBId: null });
    const row = await t.db.selectFrom('backups').selectAll().where('id', '=', b.backupId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('compose-meta-secret');
    // Write-only: every answer shows a flag in the password's place, never the password.
    const answered = { dbB: { databaseUser: 'root', hasDatabasePassword: true } };
    expect(b.metadata).toEqual(answered);
    expect(ok(await t.call('backup.one', { backupId: b.backupId })).metadata).toEqual(answered);
    const listed = ok(await t.call('user.getBackups')).find((x: { backupId: string }) => x.backupId === b.backupId);
    expect(listed.metadata).toEqual(answered);
    // An update sending the answer back keeps the stored password; the runner still opens it.
    const sealed = async () =>
      openBackupMetadata(t.platform.secrets, (await t.db.selectFrom('backups').select('metadata').where('id', '=', b.backupId).executeTakeFirstOrThrow()).metadata);
    expect(ok(await t.call('backup.update', { ...updateOf(b), metadata: { dbB: { databaseUser: 'admin', hasDatabasePassword: true } } })).metadata).toEqual({
      dbB: { databaseUser: 'admin', hasDatabasePassword: true },
    });
    expect(await sealed()).toEqual({ dbB: { databaseUser: 'admin', databasePassword: 'compose-meta-secret' } });
    // A new one replaces it, null removes it.
    ok(await t.call('backup.update', { ...updateOf(b), metadata: { dbB: { databaseUser: 'admin', databasePassword: 'compose-meta-new' } } }));
    expect(await sealed()).toEqual({ dbB: { databaseUser: 'admin', databasePassword: 'compose-meta-new' } });
    ok(await t.call('backup.update', { ...updateOf(b), metadata: { dbB: { databaseUser: 'admin', databasePassword: null } } }));
    expect(await sealed()).toEqual({ dbB: { databaseUser: 'admin' } });
    expect(ok(await t.call('backup.one', { backupId: b.backupId })).metadata).toEqual({ dbB: { databaseUser: 'admin' } });

    const compose = (extra: Record<string, unknown>) => backupInput(d.destinationId, { backupType: 'compose', databaseType: 'dbA', composeId: stack.composeId, serviceName: 'postgres', ...extra });
    badField(await t.call('backup.create', compose({ serviceName: null })), 'serviceName');
    badField(await t.call('backup.create', compose({ serviceName: 'bad name' })), 'serviceName');
    badField(await t.call('backup.create', compose({ composeId: null })), 'composeId');
    badField(await t.call('backup.create', compose({ composeId: 'cmp_missing' })), 'composeId');
    badField(await t.call('backup.create', compose({ dbAId: app.id })), 'dbAId');
    badField(await t.call('backup.create', compose({ databaseType: 'web-server' })), 'backupType');

    // A compose backup may switch the database kind in its service, but needs its service name.
    const switched = ok(await t.call('backup.update', { ...updateOf(b), databaseType: 'dbC', serviceName: 'mysql', metadata: { dbC: { databaseRootPassword: 'x' } } }));
    expect(switched).toMatchObject({ databaseType: 'dbC', serviceName: 'mysql', composeId: stack.composeId });
    badField(await t.call('backup.update', { ...updateOf(b), serviceName: null }), 'serviceName');
    badField(await t.call('backup.update', { ...updateOf(b), databaseType: 'web-server' }), 'databaseType');
    expect(ok(await t.call('backup.one', { backupId: b.backupId }))).toMatchObject({ databaseType: 'dbC', serviceName: 'mysql' });
  });

  it("refuses a compose backup's service its stack's raw file does not have, naming serviceName; a git source's file is not known", async () => {
    const d = await newDestination();
    const file = 'services:\n  db:\n    image: postgres:17\n';
    const raw = ok(await t.call('compose.create', { name: 'with-file', environmentId: env, composeFile: file }));
    const compose = (composeId: string, serviceName: string) => backupInput(d.destinationId, { backupType: 'compose', databaseType: 'dbA', composeId, serviceName });
    const before = (await t.db.selectFrom('backups').select('id').execute()).length;
    const missing = await t.call('backup.create', compose(raw.composeId, 'postgres'));
    badField(missing, 'serviceName');
    expect(missing.body.issues).toEqual([{ path: ['serviceName'], message: "the stack's compose file has no service postgres" }]);
    expect((await t.db.selectFrom('backups').select('id').execute()).length).toBe(before);
    const kept = ok(await t.call('backup.create', compose(raw.composeId, 'db')));
    expect(kept).toMatchObject({ serviceName: 'db', composeId: raw.composeId });
    // An update naming a service the file lacks is refused the same way, and changes nothing.
    const renamed = await t.call('backup.update', { ...updateOf(kept), serviceName: 'postgres', schedule: '@hourly' });
    badField(renamed, 'serviceName');
    expect(renamed.body.issues).toEqual([{ path: ['serviceName'], message: "the stack's compose file has no service postgres" }]);
    expect(ok(await t.call('backup.one', { backupId: kept.backupId }))).toEqual(kept);
    // Once the service has left the file, the backup can still be disabled (its service unchanged), not moved to another missing one.
    await t.db.updateTable('composeStacks').set({ composeFile: 'services:\n  cache:\n    image: redis:8\n' }).where('id', '=', raw.composeId).execute();
    expect(ok(await t.call('backup.update', { ...updateOf(kept), enabled: false }))).toMatchObject({ enabled: false, serviceName: 'db' });
    badField(await t.call('backup.update', { ...updateOf(kept), serviceName: 'postgres' }), 'serviceName');
    // A git source's file is read by the agent only: accepted.
    const git = await newCompose('from-git');
    await t.db.updateTable('composeStacks').set({ sourceType: 'git', composeFile: file }).where('id', '=', git.composeId).execute();
    ok(await t.call('backup.create', compose(git.composeId, 'postgres')));
  });

  // libSQL backups run like the others (their DumpDatabase: verifications.int.test.ts); only a target that does not run is refused.
  it('runs libSQL backups as the others: manualBackupDbE takes dbE backups only, and refuses a target that does not run', async () => {
    const d = await newDestination();
    const libsql = await newDb('db-libsql', 'dbE');
    const stack = await newCompose('libsql-stack');
    const own = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbE', dbEId: libsql.id })));
    const compose = ok(await t.call('backup.create', backupInput(d.destinationId, { backupType: 'compose', databaseType: 'dbE', composeId: stack.composeId, serviceName: 'libsql' })));
    const before = (await t.db.selectFrom('commands').select('id').execute()).length;
    const stopped = await t.call('backup.manualBackupDbE', { backupId: own.backupId });
    badField(stopped, 'backupId');
    expect(stopped.body.issues[0].message).toBe(`the database service ${libsql.appName} is not running (idle): deploy or start it first`);
    const undeployed = await t.call('backup.manualBackupCompose', { backupId: compose.backupId });
    badField(undeployed, 'backupId');
    expect(undeployed.body.issues[0].message).toMatch(/^the compose stack .* is not running/);
    badField(await t.call('backup.manualBackupDbE', { backupId: compose.backupId }), 'backupId');
    badField(await t.call('backup.manualBackupDbA', { backupId: own.backupId }), 'backupId');
    expect((await t.db.selectFrom('commands').select('id').execute()).length).toBe(before);
  });

  it('takes the platform backup with no target, from admins only', async () => {
    const d = await newDestination();
    const app = await newDb();
    const platform = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', database: 'skiff', includeEncryptionKey: true })));
    expect(platform).toMatchObject({ databaseType: 'web-server', backupType: 'database', includeEncryptionKey: true, dbAId: null, composeId: null });
    badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', dbAId: app.id })), 'dbAId');
    badField(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', composeId: 'cmp_x' })), 'composeId');
    badField(await t.call('backup.update', { ...updateOf(platform), databaseType: 'dbA' }), 'databaseType');
    // The spec's update takes includeEncryptionKey: given, it is changed; absent, kept.
    expect(ok(await t.call('backup.update', { ...updateOf(platform), includeEncryptionKey: false })).includeEncryptionKey).toBe(false);
    expect(ok(await t.call('backup.update', updateOf(platform))).includeEncryptionKey).toBe(false);
    expect(ok(await t.call('backup.update', { ...updateOf(platform), includeEncryptionKey: true })).includeEncryptionKey).toBe(true);
    expect(ok(await t.call('backup.update', updateOf(platform))).includeEncryptionKey).toBe(true);
    const database = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id })));
    badField(await t.call('backup.update', { ...updateOf(database), includeEncryptionKey: true }), 'includeEncryptionKey');
    expect(ok(await t.call('backup.one', { backupId: database.backupId })).includeEncryptionKey).toBe(false);
    const admin = t.as((await addMember(t, 'backup-admin@example.com', 'admin')).key);
    ok(await admin('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', database: 'skiff' })));
    expect(ok(await admin('backup.one', { backupId: platform.backupId })).backupId).toBe(platform.backupId);
  });

  it('refuses schedules that are not cron expressions, naming schedule and changing nothing', async () => {
    const d = await newDestination();
    const app = await newDb();
    const target = { databaseType: 'dbA', dbAId: app.id };
    for (const schedule of ['', 'daily', '* * * *', '61 * * * *', '0 25 * * *', '0 0 30 2 *', '@reboot', '*/0 * * * *', '0 0 * * 8', '1-2-3 * * * *']) {
      badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, schedule })), 'schedule');
    }
    for (const schedule of ['*/15 * * * *', '0 0 * * MON-FRI', '30 0 3 1,15 * *', '@weekly', '0 4 * JAN,JUL SUN']) {
      ok(await t.call('backup.create', backupInput(d.destinationId, { ...target, schedule })));
    }
    const b = ok(await t.call('backup.create', backupInput(d.destinationId, target)));
    badField(await t.call('backup.update', { ...updateOf(b), schedule: '0 0 * *' }), 'schedule');
    expect(ok(await t.call('backup.one', { backupId: b.backupId })).schedule).toBe('0 3 * * *');
  });

  it('checks prefix, keepLatestCount, database, destinationId and userId', async () => {
    const d = await newDestination();
    const app = await newDb();
    const target = { databaseType: 'dbA', dbAId: app.id };
    badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, prefix: '../escape' })), 'prefix');
    badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, prefix: '' })), 'prefix');
    badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, keepLatestCount: 0 })), 'keepLatestCount');
    badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, keepLatestCount: 2.5 })), 'keepLatestCount');
    badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, database: '--all-databases' })), 'database');
    badField(await t.call('backup.create', backupInput('dst_missing', target)), 'destinationId');
    badField(await t.call('backup.create', backupInput(d.destinationId, { ...target, userId: 'usr_missing' })), 'userId');
    const kept = ok(await t.call('backup.create', backupInput(d.destinationId, { ...target, keepLatestCount: null, enabled: null, prefix: 'x' })));
    expect(kept).toMatchObject({ keepLatestCount: null, enabled: true, prefix: 'x/' });
    badField(await t.call('backup.update', { ...updateOf(kept), destinationId: 'dst_missing' }), 'destinationId');
    badField(await t.call('backup.update', { ...updateOf(kept), serviceName: 'db' }), 'serviceName');
    badField(await t.call('backup.update', { ...updateOf(kept), databaseType: 'dbB' }), 'databaseType');
    expect(ok(await t.call('backup.one', { backupId: kept.backupId }))).toEqual(kept);
  });

  it('goes with its database service or compose stack (the foreign key cascades)', async () => {
    const d = await newDestination();
    const db = await newDb('doomed', 'dbD');
    const stack = await newCompose('doomed-stack');
    const a = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbD', dbDId: db.id })));
    const c = ok(await t.call('backup.create', backupInput(d.destinationId, { backupType: 'compose', databaseType: 'dbA', composeId: stack.composeId, serviceName: 'db' })));
    ok(await t.call('dbD.remove', { dbDId: db.id }));
    expect((await t.call('backup.one', { backupId: a.backupId })).status).toBe(404);
    expect(await t.db.selectFrom('backups').select('id').where('id', '=', a.backupId).executeTakeFirst()).toBeUndefined();
    expect((await t.call('backup.one', { backupId: c.backupId })).status).toBe(200);
    ok(await t.call('compose.delete', { composeId: stack.composeId }));
    expect((await t.call('backup.one', { backupId: c.backupId })).status).toBe(404);
    // With its backups gone the destination can go.
    ok(await t.call('destination.remove', { destinationId: d.destinationId }));
  });

  it('lists the organization’s backups in user.getBackups', async () => {
    const listed = ok(await t.call('user.getBackups'));
    const rows = await t.db.selectFrom('backups').select('id').where('organizationId', '=', t.organizationId).execute();
    expect(listed.map((b: { backupId: string }) => b.backupId).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(listed.some((b: { databaseType: string }) => b.databaseType === 'web-server')).toBe(true);
  });

  it('answers NOT_FOUND for an unknown backup on every run operation (runs are in backup-runs.int.test.ts and databases.e2e.test.ts)', async () => {
    for (const op of ['manualBackupDbA', 'manualBackupDbD', 'manualBackupDbE', 'manualBackupCompose']) {
      expect((await t.call(`backup.${op}`, { backupId: 'bkp_x' })).status).toBe(404);
    }
    expect((await t.call('backup.manualBackupWebServer', { backupId: 'bkp_x' })).status).toBe(404);
    expect((await t.call('backup.listBackupFiles', { destinationId: 'dst_x', search: '' })).status).toBe(404);
  });
});

describe('backup permissions', () => {
  it('follows access to the target service for members; destinations and the platform backup are admins’', async () => {
    const member = await addMember(t, 'backup-member@example.com');
    const m = t.as(member.key);
    const d = await newDestination();
    const app = await newDb('guarded');
    const owned = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id })));
    const platform = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', database: 'skiff' })));

    // No access to the application yet.
    expect((await m('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id }))).status).toBe(403);
    expect((await m('backup.one', { backupId: owned.backupId })).status).toBe(403);
    expect((await m('backup.update', updateOf(owned))).status).toBe(403);
    expect((await m('backup.remove', { backupId: owned.backupId })).status).toBe(403);

    await t.call('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [app.id] });
    const mine = ok(await m('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id })));
    expect(mine.userId).toBe(member.userId);
    expect(ok(await m('backup.one', { backupId: owned.backupId })).backupId).toBe(owned.backupId);
    ok(await m('backup.update', { ...updateOf(owned), schedule: '@hourly' }));
    ok(await m('backup.remove', { backupId: mine.backupId }));

    // The platform backup, destinations and the organization's list stay admin-only.
    expect((await m('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', database: 'skiff' }))).status).toBe(403);
    expect((await m('backup.one', { backupId: platform.backupId })).status).toBe(403);
    expect((await m('backup.remove', { backupId: platform.backupId })).status).toBe(403);
    expect((await m('user.getBackups')).status).toBe(403);
    expect((await m('destination.create', destinationInput)).status).toBe(403);
    expect((await m('destination.one', { destinationId: d.destinationId })).status).toBe(403);
    expect((await m('destination.all')).status).toBe(403);
    expect((await m('destination.update', { destinationId: d.destinationId, name: 'x' })).status).toBe(403);
    expect((await m('destination.remove', { destinationId: d.destinationId })).status).toBe(403);
    expect((await m('destination.testConnection', destinationInput)).status).toBe(403);

    const admin = t.as((await addMember(t, 'dest-admin@example.com', 'admin')).key);
    const byAdmin = await newDestination({ name: 'admin-made' }, admin);
    ok(await admin('destination.update', { destinationId: byAdmin.destinationId, region: 'us-east-1' }));
    ok(await admin('destination.remove', { destinationId: byAdmin.destinationId }));
  });

  it('isolates organizations: their ids are NOT_FOUND, or BAD_REQUEST when referenced', async () => {
    const d = await newDestination();
    const app = await newDb('isolated');
    const b = ok(await t.call('backup.create', backupInput(d.destinationId, { databaseType: 'dbA', dbAId: app.id })));
    const org = (await t.call('organization.create', { name: 'Backup Elsewhere' })).body;
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.organizationId } })).body.key;
    const outsider = t.as(key);

    expect((await outsider('backup.one', { backupId: b.backupId })).status).toBe(404);
    expect((await outsider('backup.update', updateOf(b))).status).toBe(404);
    expect((await outsider('backup.remove', { backupId: b.backupId })).status).toBe(404);
    expect((await outsider('destination.one', { destinationId: d.destinationId })).status).toBe(404);
    expect((await outsider('destination.update', { destinationId: d.destinationId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('destination.remove', { destinationId: d.destinationId })).status).toBe(404);
    expect(ok(await outsider('destination.all'))).toEqual([]);
    expect(ok(await outsider('user.getBackups'))).toEqual([]);

    const theirs = await newDestination({ name: 'theirs' }, outsider);
    // Our application with their destination, their destination for our backup, our destination for theirs.
    badField(await outsider('backup.create', backupInput(theirs.destinationId, { databaseType: 'dbA', dbAId: app.id })), 'dbAId');
    badField(await t.call('backup.create', backupInput(theirs.destinationId, { databaseType: 'dbA', dbAId: app.id })), 'destinationId');
    badField(await t.call('backup.update', { ...updateOf(b), destinationId: theirs.destinationId }), 'destinationId');
    badField(await outsider('backup.create', backupInput(d.destinationId, { databaseType: 'web-server', database: 'skiff' })), 'destinationId');
    expect(ok(await t.call('backup.one', { backupId: b.backupId }))).toEqual(b);
    expect(ok(await t.call('destination.one', { destinationId: d.destinationId }))).toEqual(d);
  });
});

/** The update input that leaves a backup as it is. */
function updateOf(b: Record<string, any>) {
  return {
    backupId: b.backupId,
    schedule: b.schedule,
    enabled: b.enabled,
    prefix: b.prefix === '' ? '/' : b.prefix,
    destinationId: b.destinationId,
    database: b.database,
    keepLatestCount: b.keepLatestCount,
    serviceName: b.serviceName,
    metadata: b.metadata,
    databaseType: b.databaseType,
  };
}

describe('backup limits', () => {
  it('caps the backups of one target and of one organization (volume backups included), naming the field and adding nothing', async () => {
    const capped = await startTestPlatform({ backups: { limits: { perOrganization: 4, perTarget: 2 } } });
    try {
      const call = capped.call;
      const environmentId = ok(await call('project.create', { name: 'capped' })).environments[0].environmentId;
      const d = ok(await call('destination.create', destinationInput));
      const db = ok(await call('dbA.create', { name: 'one', environmentId }));
      const other = ok(await call('dbA.create', { name: 'two', environmentId }));
      const input = (dbAId: string) => backupInput(d.destinationId, { databaseType: 'dbA', dbAId });
      ok(await call('backup.create', input(db.dbAId)));
      ok(await call('backup.create', input(db.dbAId)));
      const third = await call('backup.create', input(db.dbAId));
      badField(third, 'dbAId');
      expect(third.body.issues[0].message).toMatch(/already has 2 backups, the most allowed for one target \(SKIFF_MAX_BACKUPS_PER_TARGET is 2\)/);
      ok(await call('backup.create', input(other.dbAId)));
      const app = ok(await call('application.create', { name: 'files', environmentId }));
      ok(await call('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: 'capped-files', mountPath: '/data' }));
      const volume = { applicationId: app.applicationId, volumeName: 'capped-files', destinationId: d.destinationId, schedule: '0 3 * * *', prefix: 'vol/' };
      ok(await call('volumeBackup.create', volume));
      const over = await call('volumeBackup.create', volume);
      badField(over, 'volumeName');
      expect(over.body.issues[0].message).toMatch(/already keeps 4 backups, the most allowed \(SKIFF_MAX_BACKUPS_PER_ORGANIZATION is 4\)/);
      badField(await call('backup.create', input(other.dbAId)), 'dbAId');
      expect(ok(await call('user.getBackups')).length).toBe(3);
      // A compose backup's service is its target: an update moving it to a full one is refused
      // naming serviceName; moving it needs no room in the organization (it adds no backup).
      for (const b of ok(await call('user.getBackups'))) ok(await call('backup.remove', { backupId: b.backupId }));
      const stack = ok(await call('compose.create', { name: 'capped-stack', environmentId }));
      const compose = (serviceName: string) => backupInput(d.destinationId, { backupType: 'compose', databaseType: 'dbA', composeId: stack.composeId, serviceName });
      ok(await call('backup.create', compose('db')));
      ok(await call('backup.create', compose('db')));
      const moving = ok(await call('backup.create', compose('replica')));
      const full = await call('backup.update', { ...updateOf(moving), serviceName: 'db' });
      badField(full, 'serviceName');
      expect(full.body.issues[0].message).toMatch(/already has 2 backups, the most allowed for one target/);
      expect(ok(await call('backup.one', { backupId: moving.backupId })).serviceName).toBe('replica');
      expect(ok(await call('backup.update', { ...updateOf(moving), serviceName: 'analytics' })).serviceName).toBe('analytics');
    } finally {
      await capped.close();
    }
  });

  // The count and the insert are one step per organization (a lock held until the insert commits).
  it.each(['postgres', 'pglite'] as const)('holds when creates race at the limit: exactly the room left passes, the others answer BAD_REQUEST naming the field (%s)', async (database) => {
    const capped = await startTestPlatform({ database, backups: { limits: { perOrganization: 4, perTarget: 2 } } });
    try {
      const setUp = async (call: Call) => {
        const environmentId = ok(await call('project.create', { name: 'racing' })).environments[0].environmentId;
        const d = ok(await call('destination.create', destinationInput));
        const dbs = [];
        for (const name of ['one', 'two', 'three']) dbs.push(ok(await call('dbA.create', { name, environmentId })).dbAId as string);
        const app = ok(await call('application.create', { name: 'files', environmentId }));
        ok(await call('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: `race-files-${app.applicationId}`, mountPath: '/data' }));
        const volume = { applicationId: app.applicationId, volumeName: `race-files-${app.applicationId}`, destinationId: d.destinationId, schedule: '0 3 * * *', prefix: 'vol/' };
        return { dbs, volume, input: (dbAId: string) => backupInput(d.destinationId, { databaseType: 'dbA', dbAId }) };
      };
      const refusedAll = (answers: { status: number; body: any }[], passed: number, message: RegExp) => {
        expect(answers.filter((a) => a.status === 200), JSON.stringify(answers.map((a) => a.body))).toHaveLength(passed);
        for (const refused of answers.filter((a) => a.status !== 200)) {
          expect(refused.status).toBe(400);
          expect(refused.body.issues).toEqual([{ path: [expect.stringMatching(/^(dbAId|volumeName)$/)], message: expect.stringMatching(message) }]);
        }
      };
      const mine = await setUp(capped.call);
      // One target: two of four pass.
      refusedAll(await Promise.all([1, 2, 3, 4].map(() => capped.call('backup.create', mine.input(mine.dbs[0]!)))), 2, /SKIFF_MAX_BACKUPS_PER_TARGET is 2/);
      // The organization (volume backups included): two of five pass, while another organization's creates are not held back.
      const org = ok(await capped.call('organization.create', { name: 'Other racer' }));
      const theirCall = capped.as(ok(await capped.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.organizationId } })).key);
      const theirs = await setUp(theirCall);
      const answers = await Promise.all([
        capped.call('backup.create', mine.input(mine.dbs[1]!)),
        capped.call('backup.create', mine.input(mine.dbs[1]!)),
        capped.call('backup.create', mine.input(mine.dbs[2]!)),
        capped.call('volumeBackup.create', mine.volume),
        capped.call('volumeBackup.create', mine.volume),
        theirCall('backup.create', theirs.input(theirs.dbs[0]!)),
        theirCall('volumeBackup.create', theirs.volume),
      ]);
      refusedAll(answers.slice(0, 5), 2, /SKIFF_MAX_BACKUPS_PER_ORGANIZATION is 4/);
      expect(answers.slice(5).map((a) => a.status)).toEqual([200, 200]);
      expect(ok(await capped.call('user.getBackups')).length + Number((await capped.db.selectFrom('volumeBackups').select((eb) => eb.fn.countAll().as('n')).where('organizationId', '=', capped.organizationId).executeTakeFirstOrThrow()).n)).toBe(4);
    } finally {
      await capped.close();
    }
  });
});
