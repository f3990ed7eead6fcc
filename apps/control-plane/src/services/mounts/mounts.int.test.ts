import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Command } from '@skiff/proto';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

/** Issue 18, section 2: applications' mounts (`mounts.*`), what a deploy sends, and `application.delete`'s `deleteVolumes`. */
let t: TestPlatform;
let env: string;
let organizationId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'mounts' })).body;
  env = project.environments[0].environmentId;
  organizationId = (await t.db.selectFrom('members').select('organizationId').where('platformAdmin', '=', true).executeTakeFirstOrThrow()).organizationId;
});
afterAll(() => t?.close());

const SECRET_TEXT = 'db_password=mount-secret-7f3a';

async function anApplication(name = 'web') {
  const app = await t.call('application.create', { name, environmentId: env });
  expect(app.status, JSON.stringify(app.body)).toBe(200);
  const applicationId: string = app.body.applicationId;
  const image = await t.call('application.saveContainerProvider', { applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  expect(image.status, JSON.stringify(image.body)).toBe(200);
  return applicationId;
}

const refused = (res: { status: number; body: any }, field: string, text?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('BAD_REQUEST');
  expect(res.body.issues.map((i: { path: string[] }) => i.path[0])).toContain(field);
  if (text) expect(res.body.message).toContain(text);
};

const countMounts = async (applicationId: string) =>
  (await t.db.selectFrom('applicationMounts').select('id').where('applicationId', '=', applicationId).execute()).length;

/** The DeployApplication commands queued for the application, oldest first. */
async function deploys(applicationId: string) {
  const rows = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${applicationId}`).execute();
  return rows
    .sort((a, b) => Number(a.position) - Number(b.position))
    .map((row) => Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload)))
    .flatMap((c) => (c.payload?.$case === 'deployApplication' ? [c.payload.value] : []));
}

describe('mounts of an application', () => {
  it('refuses paths that leave their place, relative or `/` mount paths and bad volume names, naming the field and storing nothing', async () => {
    const applicationId = await anApplication('validation');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'volume', volumeName: 'data', mountPath: 'data' }, 'mountPath'],
      [{ type: 'volume', volumeName: 'data', mountPath: '/' }, 'mountPath'],
      [{ type: 'volume', volumeName: 'data', mountPath: '/srv/../etc' }, 'mountPath'],
      [{ type: 'volume', volumeName: 'data', mountPath: '/srv/./x' }, 'mountPath'],
      [{ type: 'volume', volumeName: '../data', mountPath: '/data' }, 'volumeName'],
      [{ type: 'volume', volumeName: '-data', mountPath: '/data' }, 'volumeName'],
      [{ type: 'volume', volumeName: 'da ta', mountPath: '/data' }, 'volumeName'],
      [{ type: 'file', filePath: '../escape.txt', content: 'x', mountPath: '/etc/x' }, 'filePath'],
      [{ type: 'file', filePath: 'conf/../../escape.txt', content: 'x', mountPath: '/etc/x' }, 'filePath'],
      [{ type: 'file', filePath: '/etc/passwd', content: 'x', mountPath: '/etc/x' }, 'filePath'],
      [{ type: 'file', filePath: 'a\\..\\b', content: 'x', mountPath: '/etc/x' }, 'filePath'],
      [{ type: 'bind', hostPath: 'relative/dir', mountPath: '/data' }, 'hostPath'],
      [{ type: 'bind', hostPath: '/srv/../etc', mountPath: '/data' }, 'hostPath'],
      // Each type takes its own field, and only that.
      [{ type: 'volume', mountPath: '/data' }, 'volumeName'],
      [{ type: 'file', content: 'x', mountPath: '/etc/x' }, 'filePath'],
      [{ type: 'volume', volumeName: 'data', hostPath: '/srv', mountPath: '/data' }, 'hostPath'],
      [{ type: 'volume', volumeName: 'data', content: 'x', mountPath: '/data' }, 'content'],
    ];
    for (const [input, field] of cases) refused(await t.call('mounts.create', { applicationId, ...input }), field);
    expect(await countMounts(applicationId)).toBe(0);
  });

  it("refuses at save a volume another workload of the server has or could have, with one message whatever the reason", async () => {
    const mine = await anApplication('vol-owner');
    expect((await t.call('mounts.create', { applicationId: mine, type: 'volume', volumeName: 'shared-ledger', mountPath: '/data' })).status).toBe(200);
    const org = (await t.call('organization.create', { name: 'volume thief' })).body;
    const key = (await t.call('user.createApiKey', { name: 'thief', metadata: { organizationId: org.organizationId } })).body.key;
    const thief = t.as(key);
    const theirEnv = (await thief('project.create', { name: 'steal' })).body.environments[0].environmentId;
    const theirs = (await thief('application.create', { name: 'thief', environmentId: theirEnv })).body.applicationId;
    const db = (await t.call('dbA.create', { name: 'ledger', environmentId: env })).body;
    const stack = (await t.call('compose.create', { name: 'stack', environmentId: env })).body;
    const messages = new Set<string>();
    // Another application's volume, a database's and a compose stack's (named from their appName), Skiff's own, and a name nobody uses yet of that form.
    for (const volumeName of ['shared-ledger', db.appName, `${db.appName}-data`, `${stack.appName}_pgdata`, 'skiff-proxy-data', `${db.appName}.never-made`]) {
      const res = await thief('mounts.create', { applicationId: theirs, type: 'volume', volumeName, mountPath: '/data' });
      refused(res, 'volumeName');
      messages.add(res.body.issues[0].message);
    }
    expect(messages.size).toBe(1);
    expect(await countMounts(theirs)).toBe(0);
    const own = await thief('mounts.create', { applicationId: theirs, type: 'volume', volumeName: 'thief-data', mountPath: '/data' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    refused(await thief('mounts.update', { mountId: own.body.mountId, volumeName: 'shared-ledger' }), 'volumeName');
    expect((await thief('mounts.all', { applicationId: theirs })).body.map((m: { volumeName: string }) => m.volumeName)).toEqual(['thief-data']);
  });

  it('keeps a secret file\'s content sealed and write-only, and one mount path per application', async () => {
    const applicationId = await anApplication('secret-file');
    const created = await t.call('mounts.create', { applicationId, type: 'file', filePath: 'conf/app.env', content: t.watch.secret(SECRET_TEXT), secret: true, mountPath: '/etc/app.env' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ type: 'file', filePath: 'conf/app.env', content: null, secret: true, hasContent: true, mountPath: '/etc/app.env' });
    expect(JSON.stringify((await t.call('mounts.all', { applicationId })).body)).not.toContain(SECRET_TEXT);
    const row = await t.db.selectFrom('applicationMounts').select('content').where('id', '=', created.body.mountId).executeTakeFirstOrThrow();
    expect(row.content).not.toContain(SECRET_TEXT);
    expect(t.platform.secrets.open(row.content!)).toBe(SECRET_TEXT);

    refused(await t.call('mounts.create', { applicationId, type: 'volume', volumeName: 'other', mountPath: '/etc/app.env' }), 'mountPath', 'already used');
    const plain = await t.call('mounts.create', { applicationId, type: 'file', filePath: 'motd', content: 'hello', mountPath: '/etc/motd' });
    expect(plain.body).toMatchObject({ content: 'hello', secret: false });
    const updated = await t.call('mounts.update', { mountId: plain.body.mountId, secret: true });
    expect(updated.body).toMatchObject({ content: null, secret: true, hasContent: true });
    refused(await t.call('mounts.update', { mountId: plain.body.mountId, hostPath: '/srv' }), 'hostPath');
  });

  it('refuses host binds on the platform host unless the organization is trusted, when saved and again at deploy', async () => {
    const applicationId = await anApplication('binds');
    refused(await t.call('mounts.create', { applicationId, type: 'bind', hostPath: '/srv/shared', mountPath: '/shared' }), 'hostPath', 'settings.trustOrganization');
    expect(await countMounts(applicationId)).toBe(0);

    await t.call('settings.trustOrganization', { organizationId, trusted: true });
    let bind: { status: number; body: any };
    try {
      bind = await t.call('mounts.create', { applicationId, type: 'bind', hostPath: '/srv/shared', mountPath: '/shared' });
      expect(bind.status, JSON.stringify(bind.body)).toBe(200);
      expect((await t.call('application.deploy', { applicationId })).status).toBe(200);
    } finally {
      await t.call('settings.trustOrganization', { organizationId, trusted: false });
    }
    refused(await t.call('application.deploy', { applicationId }), 'mounts', 'host bind mounts are refused');
    const sent = await deploys(applicationId);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.spec!.binds).toEqual([{ source: '/srv/shared', target: '/shared', readOnly: false }]);
  });

  it('sends volumes in the spec and files (secret contents opened) in the deploy; members need canCreateServices to change them', async () => {
    const applicationId = await anApplication('deploy-spec');
    expect((await t.call('mounts.create', { applicationId, type: 'volume', volumeName: 'deploy-spec-data', mountPath: '/data' })).status).toBe(200);
    expect((await t.call('mounts.create', { applicationId, type: 'file', filePath: 'secrets/token', content: t.watch.secret(SECRET_TEXT), secret: true, mountPath: '/run/token' })).status).toBe(200);
    expect((await t.call('application.deploy', { applicationId })).status).toBe(200);
    const [deploy] = await deploys(applicationId);
    expect(deploy!.spec!.volumes).toEqual([{ source: 'deploy-spec-data', target: '/data', readOnly: false }]);
    expect(deploy!.spec!.binds).toEqual([]);
    expect(deploy!.files).toEqual([{ path: 'secrets/token', content: SECRET_TEXT, target: '/run/token' }]);

    const member = await addMember(t, 'mounts-member@example.com', 'member');
    const res = await t.as(member.key)('mounts.create', { applicationId, type: 'volume', volumeName: 'x1', mountPath: '/x' });
    expect([403, 404]).toContain(res.status);
  });

  it('application.delete answers which volumes stay, or that they go with deleteVolumes', async () => {
    const kept = await anApplication('delete-keep');
    await t.call('mounts.create', { applicationId: kept, type: 'volume', volumeName: 'keep-me', mountPath: '/data' });
    const answer = await t.call('application.delete', { applicationId: kept });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ applicationId: kept, deleteVolumes: false, keptVolumes: ['keep-me'] });

    const gone = await anApplication('delete-volumes');
    await t.call('mounts.create', { applicationId: gone, type: 'volume', volumeName: 'drop-me', mountPath: '/data' });
    expect((await t.call('application.deploy', { applicationId: gone })).status).toBe(200);
    const deleted = await t.call('application.delete', { applicationId: gone, deleteVolumes: true });
    expect(deleted.body).toMatchObject({ deleteVolumes: true, keptVolumes: [] });
    const rows = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${gone}`).execute();
    const removal = rows
      .map((row) => Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload)))
      .find((c) => c.payload?.$case === 'removeWorkload');
    expect(removal?.payload?.$case === 'removeWorkload' && removal.payload.value.removeVolumes).toBe(true);
  });
});
