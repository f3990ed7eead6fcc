import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Call, type TestPlatform, addMember, startTestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let ownServer: string;
let otherServer: string;
let otherKey: string;

const insertServer = async (platform: TestPlatform, organizationId: string) => {
  const id = `srv_${randomBytes(6).toString('hex')}`;
  await platform.db.insertInto('servers').values({ id, organizationId, name: id, address: '93.184.216.34' }).execute();
  return id;
};

beforeAll(async () => {
  t = await startTestPlatform();
  ownServer = await insertServer(t, t.organizationId);
  const other = await t.call('organization.create', { name: 'Elsewhere' });
  otherKey = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
  otherServer = await insertServer(t, other.body.organizationId);
});
afterAll(() => t?.close());

/** The operations that address the platform host's proxy only. */
const PLATFORM_ONLY: [string, Record<string, unknown>][] = [
  ['settings.readProxyConfig', {}],
  ['settings.updateProxyConfig', { proxyConfig: '{}' }],
  ['settings.readWebServerProxyConfig', {}],
  ['settings.updateWebServerProxyConfig', { proxyConfig: '[]' }],
  ['settings.readMiddlewareProxyConfig', {}],
  ['settings.updateMiddlewareProxyConfig', { proxyConfig: '{}' }],
];

/** The operations that take a `serverId`, with what else they need; the grant ones first. */
const ON_A_SERVER: [string, Record<string, unknown>][] = [
  ['settings.readDirectories', {}],
  ['settings.readProxyFile', { path: 'global.json' }],
  ['settings.updateProxyFile', { path: 'global.json', proxyConfig: '{}' }],
  ['settings.reloadProxy', {}],
  ['settings.toggleDashboard', { enableDashboard: true }],
  ['settings.readProxyEnv', {}],
];
const GRANTED = new Set(['settings.readDirectories', 'settings.readProxyFile', 'settings.updateProxyFile']);

async function expectStatus(call: Call, op: string, input: Record<string, unknown>, status: number) {
  const res = await call(op, input);
  expect(res.status, `${op} ${JSON.stringify(input)}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** Reached the agent: with no agent channel, a BAD_REQUEST saying the agent did not answer, naming no field. */
async function expectAgentAsked(call: Call, op: string, input: Record<string, unknown>, server: string) {
  const body = await expectStatus(call, op, input, 400);
  expect(body.message).toBe(`The agent of ${server} did not answer (the control plane runs without NATS); nothing was changed on it`);
  expect(body.issues).toEqual([]);
}

describe('who may use the proxy settings', () => {
  it('lets the platform administrator reach the platform host and their servers', async () => {
    for (const [op, input] of [...PLATFORM_ONLY, ...ON_A_SERVER]) await expectAgentAsked(t.call, op, input, 'server local (the platform host)');
    for (const [op, input] of ON_A_SERVER) await expectAgentAsked(t.call, op, { ...input, serverId: ownServer }, `server ${ownServer}`);
  });

  it("answers NOT_FOUND for another organization's server or an unknown one", async () => {
    for (const [op, input] of ON_A_SERVER) {
      await expectStatus(t.call, op, { ...input, serverId: otherServer }, 404);
      await expectStatus(t.call, op, { ...input, serverId: 'srv_nowhere' }, 404);
      // With a key of the other organization, its server is reachable and this one is not.
      await expectAgentAsked(t.as(otherKey), op, { ...input, serverId: otherServer }, `server ${otherServer}`);
      await expectStatus(t.as(otherKey), op, { ...input, serverId: ownServer }, 404);
    }
  });

  it("refuses the platform host's proxy to admins who are not platform administrators", async () => {
    const admin = t.as((await addMember(t, 'proxy-admin@test.local', 'admin')).key);
    for (const [op, input] of [...PLATFORM_ONLY, ...ON_A_SERVER]) {
      const body = await expectStatus(admin, op, input, 403);
      expect(body.message).toMatch(/platform administrator/);
    }
    for (const [op, input] of ON_A_SERVER) await expectAgentAsked(admin, op, { ...input, serverId: ownServer }, `server ${ownServer}`);
  });

  it('refuses members without the permission, and gives those with it the files of the servers they were given', async () => {
    const member = await addMember(t, 'proxy-member@test.local');
    const m = t.as(member.key);
    for (const [op, input] of [...PLATFORM_ONLY, ...ON_A_SERVER]) {
      await expectStatus(m, op, input, 403);
      await expectStatus(m, op, { ...input, serverId: ownServer }, 403);
    }

    await t.call('user.assignPermissions', { id: member.userId, canAccessToProxyFiles: true });
    for (const [op, input] of ON_A_SERVER.filter(([op]) => GRANTED.has(op))) {
      // Not the platform host, not a server they were not given, nothing of another organization.
      expect((await expectStatus(m, op, input, 403)).message).toMatch(/platform administrator/);
      expect((await expectStatus(m, op, { ...input, serverId: ownServer }, 403)).message).toMatch(/No access to this server/);
      await expectStatus(m, op, { ...input, serverId: otherServer }, 404);
    }
    await t.call('user.assignPermissions', { id: member.userId, canAccessToProxyFiles: true, accessedServers: [ownServer] });
    for (const [op, input] of ON_A_SERVER) {
      if (GRANTED.has(op)) await expectAgentAsked(m, op, { ...input, serverId: ownServer }, `server ${ownServer}`);
      // The admin-role operations stay out of reach.
      else await expectStatus(m, op, { ...input, serverId: ownServer }, 403);
    }
  });

  it('refuses content over 512 KiB naming proxyConfig, before asking the agent', async () => {
    const big = 'x'.repeat(512 * 1024 + 1);
    const body = await expectStatus(t.call, 'settings.updateProxyFile', { path: 'global.json', proxyConfig: big, serverId: ownServer }, 400);
    expect(body.issues.map((i: { path: unknown[] }) => i.path[0])).toEqual(['proxyConfig']);
    expect((await expectStatus(t.call, 'settings.updateProxyConfig', { proxyConfig: big }, 400)).issues[0].path).toEqual(['proxyConfig']);
  });
});

describe('with the agent channel up and no agent answering', () => {
  let n: TestPlatform;
  let server: string;
  beforeAll(async () => {
    n = await startTestPlatform({ nats: { url: inject('natsUrl'), pollMs: 200 } });
    server = await insertServer(n, n.organizationId);
  });
  afterAll(() => n?.close());

  it('says the agent is not connected and that nothing was changed', async () => {
    const res = await n.call('settings.updateProxyFile', { path: 'middlewares.json', proxyConfig: '{}', serverId: server });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'BAD_REQUEST', issues: [] });
    expect(res.body.message).toBe(`The agent of server ${server} did not answer (it is not connected); nothing was changed on it`);
  });

  it('refuses a domain naming shared middlewares, since they cannot be checked, and records nothing', async () => {
    const env = (await n.call('project.create', { name: 'mw' })).body.environments[0].environmentId;
    const app = (await n.call('application.create', { name: 'web', environmentId: env, serverId: server })).body;
    const commands = () => n.db.selectFrom('commands').select('id').where('serverId', '=', server).execute();

    for (const input of [{ middlewares: ['no-frames'] }, { forwardAuthEnabled: true }]) {
      const res = await n.call('domain.create', { host: 'mw.example.com', applicationId: app.applicationId, ...input });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toEqual(['middlewares']);
      expect(res.body.message).toContain('middlewares.json');
      expect(res.body.message).toContain('it is not connected');
    }
    expect(await n.db.selectFrom('domains').select('id').where('serverId', '=', server).execute()).toEqual([]);
    expect(await commands()).toEqual([]);

    // Routes without any need no agent; a disabled route may keep the names.
    const plain = await n.call('domain.create', { host: 'plain.example.com', applicationId: app.applicationId });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    const off = await n.call('domain.update', { domainId: plain.body.domainId, host: 'plain.example.com', enabled: false, middlewares: ['no-frames'] });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(await commands()).toHaveLength(2);
    const enabling = await n.call('domain.update', { domainId: plain.body.domainId, host: 'plain.example.com', enabled: true });
    expect(enabling.status).toBe(400);
    expect(enabling.body.issues[0].path).toEqual(['middlewares']);
    expect((await n.call('domain.one', { domainId: plain.body.domainId })).body.enabled).toBe(false);
  });
});
