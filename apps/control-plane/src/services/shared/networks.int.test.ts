import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Call, addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

/**
 * The networks a service may join (`networkCluster`, a cache's `networkIds`): the platform
 * network and its own organization's isolated compose networks on the same server; another
 * organization's isolated network is refused as a name no one has (at save and at deploy); a
 * network nobody's stack has only for a platform administrator.
 */
let t: TestPlatform;
/** Organization A: owned by an invited admin, no platform administration. */
let a: Call;
let aEnv: string;
/** Organization B: another tenant with an isolated compose stack. */
let b: Call;
let bEnv: string;

const tenant = async (email: string, name: string) => {
  const joined = await addMember(t, email, 'admin');
  const org = await t.as(joined.key)('organization.create', { name });
  const key = await t.as(joined.key)('user.createApiKey', { name: 'k', metadata: { organizationId: org.body.organizationId } });
  const call = t.as(key.body.key);
  const project = await call('project.create', { name: `${name} project` });
  expect(project.status, JSON.stringify(project.body)).toBe(200);
  return { call, env: project.body.environments[0].environmentId as string };
};

const isolatedStack = async (call: Call, env: string, appName: string) => {
  const stack = await call('compose.create', { name: appName, appName, environmentId: env, composeFile: 'services:\n  db:\n    image: redis:8\n' });
  expect(stack.status, JSON.stringify(stack.body)).toBe(200);
  const iso = await call('compose.update', { composeId: stack.body.composeId, isolatedDeployment: true });
  expect(iso.status, JSON.stringify(iso.body)).toBe(200);
  return stack.body;
};

beforeAll(async () => {
  t = await startTestPlatform();
  ({ call: a, env: aEnv } = await tenant('net-a@example.com', 'Net A'));
  ({ call: b, env: bEnv } = await tenant('net-b@example.com', 'Net B'));
  await isolatedStack(b, bEnv, 'b-private');
  await isolatedStack(a, aEnv, 'a-private');
  // A stack of A that is not isolated has no network of its own.
  const plain = await a('compose.create', { name: 'a-plain', appName: 'a-plain', environmentId: aEnv, composeFile: 'services:\n  x:\n    image: redis:8\n' });
  expect(plain.status).toBe(200);
});
afterAll(() => t?.close());

const application = async () => (await a('application.create', { name: 'web', environmentId: aEnv })).body.applicationId as string;
const cache = async () =>
  (await a('cache.create', { name: 'sessions', databasePassword: 'correct-horse', environmentId: aEnv })).body.cacheId as string;

describe('networkCluster of an application', () => {
  it("refuses another organization's isolated network exactly like an unknown name, changing nothing", async () => {
    const applicationId = await application();
    const other = await a('application.update', { applicationId, networkCluster: [{ Target: 'b-private' }] });
    const unknown = await a('application.update', { applicationId, networkCluster: [{ Target: 'nobody-has-this' }] });
    for (const res of [other, unknown]) {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.issues[0].path).toEqual(['networkCluster']);
    }
    expect(other.body.issues[0].message.replace('b-private', 'X')).toBe(unknown.body.issues[0].message.replace('nobody-has-this', 'X'));
    expect((await a('application.one', { applicationId })).body.networkCluster).toBeNull();
  });

  it('accepts the platform network and its own isolated stack network, not a plain stack name', async () => {
    const applicationId = await application();
    const ok = await a('application.update', { applicationId, networkCluster: [{ Target: 'skiff-network' }, { Target: 'a-private', Aliases: ['web'] }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.networkCluster).toEqual([{ Target: 'skiff-network' }, { Target: 'a-private', Aliases: ['web'] }]);
    const plain = await a('application.update', { applicationId, networkCluster: [{ Target: 'a-plain' }] });
    expect(plain.status).toBe(400);
  });

  it('lets a platform administrator name any network (the operator made it by hand)', async () => {
    const project = await t.call('project.create', { name: 'admin nets' });
    const app = await t.call('application.create', { name: 'admin', environmentId: project.body.environments[0].environmentId });
    const res = await t.call('application.update', { applicationId: app.body.applicationId, networkCluster: [{ Target: 'operator-net' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Never another organization's stack network, though.
    const other = await t.call('application.update', { applicationId: app.body.applicationId, networkCluster: [{ Target: 'b-private' }] });
    expect(other.status, JSON.stringify(other.body)).toBe(400);
    expect(other.body.issues[0].path).toEqual(['networkCluster']);
  });
});

describe("a cache's networks", () => {
  it("refuses another organization's isolated network in networkIds and networkCluster", async () => {
    const cacheId = await cache();
    const ids = await a('cache.update', { cacheId, networkIds: ['b-private'] });
    expect(ids.status, JSON.stringify(ids.body)).toBe(400);
    expect(ids.body.issues[0].path).toEqual(['networkIds']);
    const cluster = await a('cache.update', { cacheId, networkCluster: [{ Target: 'b-private' }] });
    expect(cluster.status, JSON.stringify(cluster.body)).toBe(400);
    expect(cluster.body.issues[0].path).toEqual(['networkCluster']);
    const row = (await a('cache.one', { cacheId })).body;
    expect(row.networkIds).toBeNull();
    expect(row.networkCluster).toBeNull();
  });

  it('accepts its own isolated network and the platform network', async () => {
    const cacheId = await cache();
    const res = await a('cache.update', { cacheId, networkIds: ['a-private', 'skiff-network'], networkCluster: [{ Target: 'a-private' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.networkIds).toEqual(['a-private', 'skiff-network']);
  });
});

describe('at deploy', () => {
  // A network saved before these rules, or one whose stack has since gone and whose name
  // another organization's stack now has: the deploy refuses it and queues nothing.
  it("refuses to deploy an application onto another organization's network saved earlier", async () => {
    const applicationId = await application();
    expect((await a('application.saveContainerProvider', { applicationId, containerImage: 'nginx:1.27', username: null, password: null, registryUrl: null })).status).toBe(200);
    await t.db.updateTable('applications').set({ networkCluster: JSON.stringify([{ Target: 'b-private' }]) as never }).where('id', '=', applicationId).execute();
    const res = await a('application.deploy', { applicationId });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.issues[0].path).toEqual(['networkCluster']);
    expect(await t.db.selectFrom('deployments').select('id').where('applicationId', '=', applicationId).execute()).toEqual([]);
    // Its own network deploys.
    await t.db.updateTable('applications').set({ networkCluster: JSON.stringify([{ Target: 'a-private' }]) as never }).where('id', '=', applicationId).execute();
    expect((await a('application.deploy', { applicationId })).status).toBe(200);
  });

  it("refuses to deploy a cache onto another organization's network saved earlier", async () => {
    const cacheId = await cache();
    await t.db.updateTable('cacheInstances').set({ networkIds: JSON.stringify(['b-private']) as never }).where('id', '=', cacheId).execute();
    const res = await a('cache.deploy', { cacheId });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.issues[0].path).toEqual(['networkIds']);
    expect(await t.db.selectFrom('commands').select('id').where('workloadKey', 'like', `%${cacheId}%`).execute()).toEqual([]);
  });
});
