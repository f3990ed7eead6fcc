import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type Answer, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let now = Date.now();
const HOUR = 3600_000;
let a: { projectId: string; envId: string; appId: string };
let b: { projectId: string; envId: string; appId: string };

const ok = (res: Answer) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

async function projectWithApp(name: string, serverId?: string) {
  const project = ok(await t.call('project.create', { name }));
  const envId = project.environments[0].environmentId as string;
  const app = ok(await t.call('application.create', { name: `${name}-app`, environmentId: envId, ...(serverId ? { serverId } : {}) }));
  return { projectId: project.projectId as string, envId, appId: app.applicationId as string };
}

/** A key of the owner (or of `as`), with `input`'s scope and expiry. */
async function mint(input: Record<string, unknown>, as = t.call) {
  const created = ok(await as('user.createApiKey', { name: 'scoped', ...input }));
  return { id: created.apiKeyId as string, key: t.watch.secret(created.key as string), call: t.as(created.key) };
}

beforeAll(async () => {
  t = await startTestPlatform({ clock: () => new Date(now) });
  a = await projectWithApp('alpha');
  b = await projectWithApp('bravo');
});
afterAll(() => t?.close());

describe('a read-only key', () => {
  it('reads, and every mutation answers FORBIDDEN naming the scope, changing nothing', async () => {
    const ro = await mint({ scope: { readOnly: true } });
    expect(ok(await ro.call('project.one', { projectId: a.projectId })).name).toBe('alpha');
    const refused = await ro.call('application.update', { applicationId: a.appId, name: 'renamed' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    expect(refused.body.message).toContain('readOnly');
    expect((await ro.call('project.create', { name: 'nope' })).status).toBe(403);
    expect(ok(await t.call('application.one', { applicationId: a.appId })).name).toBe('alpha-app');
  });
});

describe('a key limited to project A', () => {
  it("neither reads nor changes B's records, nor lists B", async () => {
    const onlyA = await mint({ scope: { projectIds: [a.projectId] } });
    expect(ok(await onlyA.call('project.one', { projectId: a.projectId })).name).toBe('alpha');
    expect(ok(await onlyA.call('application.one', { applicationId: a.appId })).name).toBe('alpha-app');
    expect(ok(await onlyA.call('project.all')).map((p: { projectId: string }) => p.projectId)).toEqual([a.projectId]);
    for (const [op, input] of [
      ['project.one', { projectId: b.projectId }],
      ['project.update', { projectId: b.projectId, name: 'stolen' }],
      ['environment.one', { environmentId: b.envId }],
      ['environment.byProjectId', { projectId: b.projectId }],
      ['application.one', { applicationId: b.appId }],
      ['application.update', { applicationId: b.appId, name: 'stolen' }],
      ['application.create', { name: 'intruder', environmentId: b.envId }],
      ['domain.byApplicationId', { applicationId: b.appId }],
    ] as const) {
      const res = await onlyA.call(op, input);
      expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(403);
    }
    expect(ok(await t.call('project.one', { projectId: b.projectId })).name).toBe('bravo');
    expect(ok(await t.call('application.one', { applicationId: b.appId })).name).toBe('bravo-app');
  });

  it('changes A, creates services in A and reads them, but nothing of the organization beyond A', async () => {
    const onlyA = await mint({ scope: { projectIds: [a.projectId] } });
    expect(ok(await onlyA.call('application.update', { applicationId: a.appId, description: 'by ci' })).description).toBe('by ci');
    const made = ok(await onlyA.call('application.create', { name: 'ci-made', environmentId: a.envId }));
    expect(ok(await onlyA.call('application.one', { applicationId: made.applicationId })).name).toBe('ci-made');
    for (const op of ['user.all', 'project.create', 'sshKey.all', 'gitProvider.getAll', 'notification.createHook']) {
      expect((await onlyA.call(op, {})).status, op).toBe(403);
    }
  });
});

describe('a key limited to a server', () => {
  it("neither reads nor uses another server, nor the services on it", async () => {
    const s1 = ok(await t.call('server.create', { name: 'one', address: '192.0.2.11' }));
    const s2 = ok(await t.call('server.create', { name: 'two', address: '192.0.2.12' }));
    const on1 = await projectWithApp('on-one', s1.serverId);
    const on2 = await projectWithApp('on-two', s2.serverId);
    const onlyS1 = await mint({ scope: { serverIds: [s1.serverId] } });
    expect(ok(await onlyS1.call('server.one', { serverId: s1.serverId })).name).toBe('one');
    expect(ok(await onlyS1.call('server.all')).map((s: { serverId: string }) => s.serverId)).toEqual([s1.serverId]);
    expect(ok(await onlyS1.call('application.one', { applicationId: on1.appId })).name).toBe('on-one-app');
    expect((await onlyS1.call('server.one', { serverId: s2.serverId })).status).toBe(403);
    expect((await onlyS1.call('application.one', { applicationId: on2.appId })).status).toBe(403);
    expect((await onlyS1.call('application.update', { applicationId: on2.appId, name: 'stolen' })).status).toBe(403);
    expect((await onlyS1.call('application.create', { name: 'elsewhere', environmentId: on1.envId, serverId: s2.serverId })).status).toBe(403);
    expect(ok(await onlyS1.call('application.create', { name: 'here', environmentId: on1.envId, serverId: s1.serverId })).serverId).toBe(s1.serverId);
    expect((await onlyS1.call('server.update', { serverId: s2.serverId, name: 'stolen' })).status).toBe(403);
    expect(ok(await t.call('application.one', { applicationId: on1.appId })).serverId).toBe(s1.serverId);
    expect(ok(await t.call('server.one', { serverId: s2.serverId })).name).toBe('two');

    const cert = (id: string, serverId: string | null) => ({
      id, organizationId: t.organizationId, serverId, name: id, certificateData: 'pem', privateKey: 'sealed', certificatePath: `/certs/${id}`,
      autoRenew: null, subject: 'CN=x', issuer: 'CN=x', subjectNames: JSON.stringify(['x.example.com']), notBefore: new Date(), expiresAt: new Date(now + HOUR), fingerprint: id,
    });
    await t.db.insertInto('certificates').values([cert('crt_one', s1.serverId), cert('crt_two', s2.serverId), cert('crt_host', null)]).execute();
    expect(ok(await onlyS1.call('certificates.all')).map((c: { certificateId: string }) => c.certificateId)).toEqual(['crt_one']);
    expect((await onlyS1.call('certificates.one', { certificateId: 'crt_two' })).status).toBe(403);
    expect((await onlyS1.call('certificates.one', { certificateId: 'crt_host' })).status).toBe(403);
    expect(ok(await t.call('certificates.all')).length).toBe(3);
  });
});

describe('expiry', () => {
  it('works until expiresAt, then answers UNAUTHORIZED "API key expired"', async () => {
    const soon = await mint({ expiresAt: new Date(now + HOUR).toISOString() });
    expect((await soon.call('user.get')).status).toBe(200);
    now += 2 * HOUR;
    const res = await soon.call('user.get');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', message: 'API key expired' });
  });

  it('refuses an expiresAt in the past, naming it', async () => {
    const res = await t.call('user.createApiKey', { name: 'late', expiresAt: new Date(now - 1000).toISOString() });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['expiresAt']);
  });
});

describe('minting', () => {
  it('a member cannot mint a key wider than their own permissions', async () => {
    const member = await addMember(t, 'ci-member@example.com');
    ok(await t.call('user.assignPermissions', { id: member.userId, accessedProjects: [a.projectId], accessedEnvironments: [a.envId] }));
    const m = t.as(member.key);
    const wider = await m('user.createApiKey', { name: 'wide', scope: { projectIds: [a.projectId, b.projectId] } });
    expect(wider.status).toBe(403);
    expect(wider.body.issues[0].path).toEqual(['scope', 'projectIds']);
    const unknown = await m('user.createApiKey', { name: 'wide', scope: { projectIds: ['prj_missing'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].path).toEqual(['scope', 'projectIds']);
    const narrow = await mint({ scope: { projectIds: [a.projectId] } }, m);
    expect(ok(await narrow.call('project.one', { projectId: a.projectId })).name).toBe('alpha');
    expect((await narrow.call('project.one', { projectId: b.projectId })).status).toBe(403);
  });

  it('a limited key makes only keys at least as narrow', async () => {
    const onlyA = await mint({ scope: { projectIds: [a.projectId] }, expiresAt: new Date(now + HOUR).toISOString() });
    expect((await onlyA.call('user.createApiKey', { name: 'free' })).status).toBe(403);
    expect((await onlyA.call('user.generateToken')).status).toBe(403);
    expect((await onlyA.call('user.createApiKey', { name: 'b', scope: { projectIds: [b.projectId] } })).status).toBe(403);
    const later = await onlyA.call('user.createApiKey', { name: 'later', scope: { projectIds: [a.projectId] }, expiresAt: new Date(now + 2 * HOUR).toISOString() });
    expect(later.status).toBe(403);
    expect(later.body.issues[0].path).toEqual(['expiresAt']);
    await mint({ scope: { projectIds: [a.projectId] }, expiresAt: new Date(now + HOUR / 2).toISOString() }, onlyA.call);
    const owners = ok(await t.call('user.apiKeys')).find((k: { name: string }) => k.name === 'initial');
    expect((await onlyA.call('user.deleteApiKey', { apiKeyId: owners.apiKeyId })).status).toBe(403);
  });
});

describe('listing and last use', () => {
  it('shows scope, expiry and lastUsedAt (moving at most once a minute), never the key', async () => {
    const ci = await mint({ name: 'ci-last-used', scope: { projectIds: [a.projectId], readOnly: true } });
    const listed = async () => ok(await t.call('user.apiKeys')).find((k: { apiKeyId: string }) => k.apiKeyId === ci.id);
    const before = await listed();
    expect(before).toMatchObject({ scope: { readOnly: true, projectIds: [a.projectId], serverIds: null }, expiresAt: null, lastUsedAt: null });
    expect(JSON.stringify(ok(await t.call('user.apiKeys')))).not.toContain(ci.key);
    expect(Object.keys(before)).not.toContain('key');

    await ci.call('project.all');
    const first = (await waitFor(async () => (await listed()).lastUsedAt, { what: 'lastUsedAt' })) as string;
    now += 10_000;
    await ci.call('project.all');
    now += 61_000;
    await ci.call('project.all');
    const second = await waitFor(async () => {
      const at = (await listed()).lastUsedAt as string;
      return at !== first && at;
    }, { what: 'lastUsedAt to move' });
    expect(Date.parse(second as string) - Date.parse(first)).toBe(71_000);
  });
});
