import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform();
  env = (await t.call('project.create', { name: 'fleet' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

const create = async (overrides: Record<string, unknown> = {}, call = t.call) => {
  const res = await call('server.create', { name: 'worker-1', address: '203.0.113.10', ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // The join token is answered once, by create (server-agents.int.test.ts covers it).
  const { join, ...record } = res.body;
  expect(join.token).toMatch(/^sjt_/);
  return record;
};

describe('server records', () => {
  it('creates a pending server, reads it back and lists servers oldest first', async () => {
    const first = await create({ description: 'web' });
    expect(first).toMatchObject({ name: 'worker-1', address: '203.0.113.10', description: 'web', status: 'pending', organizationId: t.organizationId });
    expect(first.serverId).toMatch(/^srv_/);
    expect((await t.call('server.one', { serverId: first.serverId })).body).toEqual(first);
    const second = await create({ name: 'worker-2', address: '2001:db8::2' });
    expect(second.description).toBeNull();
    const ids = (await t.call('server.all')).body.map((s: { serverId: string }) => s.serverId);
    expect(ids.indexOf(first.serverId)).toBeLessThan(ids.indexOf(second.serverId));
    expect((await t.call('server.one', { serverId: 'srv_missing' })).status).toBe(404);
  });

  it('takes IPv4, IPv6 and host names as addresses, and refuses anything else naming address', async () => {
    for (const address of ['198.51.100.7', '2001:db8::7', 'node-3.example.com', ' spaced.example.com ']) {
      const s = await create({ address });
      expect(s.address).toBe(address.trim());
    }
    const count = (await t.call('server.all')).body.length;
    for (const address of ['http://203.0.113.1', 'host name', '203.0.113.1:22', 'a;rm -rf /', '-x.example.com', '10.1']) {
      const res = await t.call('server.create', { name: 'bad', address });
      expect(res.status, address).toBe(400);
      expect(res.body.issues[0].path).toEqual(['address']);
    }
    expect((await t.call('server.all')).body.length).toBe(count);
  });

  it('updates the fields given and validates a new address', async () => {
    const s = await create();
    const res = await t.call('server.update', { serverId: s.serverId, name: 'edge-1', description: null });
    expect(res.body).toEqual({ ...s, name: 'edge-1', description: null });
    const moved = await t.call('server.update', { serverId: s.serverId, address: 'edge-1.example.com' });
    expect(moved.body.address).toBe('edge-1.example.com');
    const bad = await t.call('server.update', { serverId: s.serverId, address: 'not an address' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toEqual(['address']);
    expect((await t.call('server.one', { serverId: s.serverId })).body.address).toBe('edge-1.example.com');
  });

  it('refuses to remove a server services are on, and removes it once they are gone', async () => {
    const s = await create({ name: 'busy' });
    const app = await t.call('application.create', { name: 'on busy', environmentId: env, serverId: s.serverId });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const cache = await t.call('cache.create', { name: 'cache on busy', environmentId: env, serverId: s.serverId, databasePassword: 'pw-123456' });
    expect(cache.status, JSON.stringify(cache.body)).toBe(200);
    const refused = await t.call('server.remove', { serverId: s.serverId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].path).toEqual(['serverId']);
    expect(refused.body.issues[0].message).toContain('1 application');
    expect((await t.call('server.one', { serverId: s.serverId })).status).toBe(200);

    await t.call('application.delete', { applicationId: app.body.applicationId });
    expect((await t.call('server.remove', { serverId: s.serverId })).body.issues[0].message).toContain('1 cache instance');
    expect((await t.call('cache.remove', { cacheId: cache.body.cacheId })).status).toBe(200);
    const removed = await t.call('server.remove', { serverId: s.serverId });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.serverId).toBe(s.serverId);
    expect((await t.call('server.one', { serverId: s.serverId })).status).toBe(404);
  });

  it.each(['remove', 'leaveRunning'] as const)('removes a server with its workloads when asked (workloads: %s): their records go, its unfinished commands end', async (workloads) => {
    const s = await create({ name: `busy-${workloads}` });
    const app = await t.call('application.create', { name: `app on ${workloads}`, environmentId: env, serverId: s.serverId });
    const compose = await t.call('compose.create', { name: `stack on ${workloads}`, environmentId: env, serverId: s.serverId });
    const cache = await t.call('cache.create', { name: `cache on ${workloads}`, environmentId: env, serverId: s.serverId, databasePassword: 'pw-123456' });
    for (const r of [app, compose, cache]) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const elsewhere = await t.call('application.create', { name: `app elsewhere ${workloads}`, environmentId: env });
    await t.call('application.saveContainerProvider', { applicationId: app.body.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    expect((await t.call('application.deploy', { applicationId: app.body.applicationId })).status).toBe(200);

    const refused = await t.call('server.remove', { serverId: s.serverId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].message).toBe(
      '1 application, 1 compose stack, 1 cache instance still on this server; move or delete them first, or send workloads: "remove" (the agent removes them from the machine, volumes kept) or "leaveRunning"',
    );
    const bad = await t.call('server.remove', { serverId: s.serverId, workloads: 'keep' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toEqual(['workloads']);
    expect((await t.call('application.one', { applicationId: app.body.applicationId })).status).toBe(200);

    const removed = await t.call('server.remove', { serverId: s.serverId, workloads });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect((await t.call('server.one', { serverId: s.serverId })).status).toBe(404);
    expect((await t.call('application.one', { applicationId: app.body.applicationId })).status).toBe(404);
    expect((await t.call('compose.one', { composeId: compose.body.composeId })).status).toBe(404);
    expect((await t.call('cache.one', { cacheId: cache.body.cacheId })).status).toBe(404);
    expect((await t.call('application.one', { applicationId: elsewhere.body.applicationId })).status).toBe(200);
    const commands = await t.db.selectFrom('commands').select(['status', 'resultReason']).where('serverId', '=', s.serverId).execute();
    expect(commands.length).toBeGreaterThan(0);
    for (const c of commands) expect(c).toEqual({ status: 'failed', resultReason: 'the server was removed' });
  });
});

describe('server permissions', () => {
  it('lets only admins write, and members read the servers granted to them', async () => {
    const granted = await create({ name: 'granted' });
    const hidden = await create({ name: 'hidden' });
    const member = await addMember(t, 'server-member@example.com');
    const m = t.as(member.key);
    expect((await m('server.all')).body).toEqual([]);
    expect((await m('server.one', { serverId: granted.serverId })).status).toBe(403);
    await t.call('user.assignPermissions', { id: member.userId, accessedServers: [granted.serverId] });
    expect((await m('server.one', { serverId: granted.serverId })).body).toEqual(granted);
    expect((await m('server.one', { serverId: hidden.serverId })).status).toBe(403);
    expect((await m('server.all')).body).toEqual([granted]);
    expect((await m('server.create', { name: 'x', address: '203.0.113.99' })).status).toBe(403);
    expect((await m('server.update', { serverId: granted.serverId, name: 'x' })).status).toBe(403);
    expect((await m('server.remove', { serverId: granted.serverId })).status).toBe(403);
    expect((await t.call('server.one', { serverId: granted.serverId })).body.name).toBe('granted');

    const admin = t.as((await addMember(t, 'server-admin@example.com', 'admin')).key);
    const made = await create({ name: 'by admin' }, admin);
    expect((await admin('server.update', { serverId: hidden.serverId, name: 'renamed' })).body.name).toBe('renamed');
    expect((await admin('server.remove', { serverId: made.serverId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization, and lists only its own', async () => {
    const s = await create({ name: 'ours' });
    const other = await t.call('organization.create', { name: 'Servers elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('server.one', { serverId: s.serverId })).status).toBe(404);
    expect((await outsider('server.update', { serverId: s.serverId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('server.remove', { serverId: s.serverId })).status).toBe(404);
    expect((await outsider('server.all')).body).toEqual([]);
    const theirs = await create({ name: 'theirs' }, outsider);
    expect((await t.call('server.one', { serverId: theirs.serverId })).status).toBe(404);
    // Their server cannot be used as a target here either.
    const app = await t.call('application.create', { name: 'x', environmentId: env, serverId: theirs.serverId });
    expect(app.status).toBe(400);
    expect((await t.call('server.one', { serverId: s.serverId })).body.name).toBe('ours');
  });
});
