// The cluster.* operations on a real Postgres, with the control plane's outbox relay on a NATS
// of this file, where responders in the test answer cluster requests in the agent's wire
// format for server `local` and one remote server (the real agent answers them in
// apps/agent/src/control/cluster-control.int.test.ts and cluster.e2e.test.ts). Here: who may
// address which server's swarm, getNodeApps limited to the caller's organization, refusals
// naming `nodeId`, an agent that does not answer.
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CONTROL_REQUEST_MAX_AGE_MS, CommandVerifier, controlSubject } from '@skiff/domain';
import { ClusterOperation, ControlReply, ControlRequest } from '@skiff/proto';
import { startDedicatedNats } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const NODE = 'n1k3mz0x9q7b2c4d5e6f7g8h9';
const SECRET_TOKEN = `SWMTKN-1-${randomBytes(20).toString('hex')}`;

let t: TestPlatform;
let nats: { url: string; stop: () => Promise<void> };
let nc: NatsConnection;
let serverId: string;
let silentServerId: string;
let ownApp: string;
let foreignApp: string;
let otherAdminKey: string;
const requests: { serverId: string; request: ControlRequest }[] = [];

const ok = async (call: TestPlatform['call'], op: string, input: Record<string, unknown>) => {
  const r = await call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

/** Answers a cluster request as an agent would, for a swarm of one node running the two applications. */
function agentAnswer(request: ControlRequest): ControlReply {
  if (request.request?.$case !== 'cluster') return { commandIds: [], error: 'not a cluster request' };
  const { operation, nodeId } = request.request.value;
  const reply = (result: unknown): ControlReply => ({ commandIds: [], error: '', cluster: { resultJson: JSON.stringify(result), refusedField: '', notFound: false } });
  switch (operation) {
    case ClusterOperation.CLUSTER_OPERATION_LIST_NODES:
      return reply([{ id: NODE, hostname: 'h1', role: 'manager', availability: 'active', state: 'ready', address: '10.0.0.1:2377', leader: true, engineVersion: '20.10', labels: {}, self: true }]);
    case ClusterOperation.CLUSTER_OPERATION_INSPECT_NODE:
      if (nodeId === NODE) return reply({ ID: NODE });
      if (!/^[a-z0-9]{25}$/.test(nodeId)) return { commandIds: [], error: 'node_id must be a swarm node id', cluster: { resultJson: '', refusedField: 'node_id', notFound: false } };
      return { commandIds: [], error: `the swarm has no node ${nodeId}`, cluster: { resultJson: '', refusedField: 'node_id', notFound: true } };
    case ClusterOperation.CLUSTER_OPERATION_LIST_SERVICES: {
      const task = { id: 't1', nodeId: NODE, hostname: 'h1', state: 'running', desiredState: 'running' };
      return reply([
        { name: 'own', kind: 'application', id: ownApp, image: 'busybox', replicas: 1, tasks: [task] },
        { name: 'foreign', kind: 'application', id: foreignApp, image: 'busybox', replicas: 1, tasks: [task] },
        { name: 'unknown', kind: 'cache', id: 'no-such-cache', image: 'redis', replicas: 1, tasks: [] },
      ]);
    }
    case ClusterOperation.CLUSTER_OPERATION_JOIN_WORKER:
    case ClusterOperation.CLUSTER_OPERATION_JOIN_MANAGER: {
      const role = operation === ClusterOperation.CLUSTER_OPERATION_JOIN_WORKER ? 'worker' : 'manager';
      return reply({ role, token: SECRET_TOKEN, managerAddress: '10.0.0.1:2377', command: `docker swarm join --token ${SECRET_TOKEN} 10.0.0.1:2377` });
    }
    case ClusterOperation.CLUSTER_OPERATION_REMOVE_NODE:
      return reply({ nodeId, hostname: 'h2', movedTasks: 2 });
    default:
      return { commandIds: [], error: 'unknown' };
  }
}

async function answerAs(server: string) {
  const verifier = CommandVerifier.fromText(t.platform.commandKey);
  nc.subscribe(controlSubject(server), {
    callback: (_err, msg) => {
      const refused = verifier.check(controlSubject(server), msg.data, (name) => msg.headers?.get(name), { maxAgeMs: CONTROL_REQUEST_MAX_AGE_MS });
      if (refused !== null) {
        msg.respond(ControlReply.encode({ commandIds: [], error: `refused: ${refused}` }).finish());
        return;
      }
      const request = ControlRequest.decode(msg.data);
      requests.push({ serverId: server, request });
      msg.respond(ControlReply.encode(agentAnswer(request)).finish());
    },
  });
  await nc.flush();
}

beforeAll(async () => {
  nats = await startDedicatedNats();
  t = await startTestPlatform({ nats: { url: nats.url, pollMs: 100 } });
  t.watch.secret(SECRET_TOKEN);
  nc = await connect({ servers: nats.url });
  serverId = (await ok(t.call, 'server.create', { name: 'edge', address: '192.0.2.7' })).serverId;
  silentServerId = (await ok(t.call, 'server.create', { name: 'quiet', address: '192.0.2.8' })).serverId;
  const env = (await ok(t.call, 'project.create', { name: 'mine' })).environments[0].environmentId;
  ownApp = (await ok(t.call, 'application.create', { name: 'own', environmentId: env })).applicationId;

  // Another organization with an administrator of its own (not a platform administrator).
  const other = await ok(t.call, 'organization.create', { name: 'Other' });
  const ownerThere = (await ok(t.call, 'user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
  t.watch.secret(ownerThere);
  otherAdminKey = (await addMember(t, `admin-${randomBytes(3).toString('hex')}@test.local`, 'admin', ownerThere)).key;
  const otherEnv = (await ok(t.as(otherAdminKey), 'project.create', { name: 'theirs' })).environments[0].environmentId;
  foreignApp = (await ok(t.as(otherAdminKey), 'application.create', { name: 'foreign', environmentId: otherEnv })).applicationId;

  await answerAs('local');
  await answerAs(serverId);
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await t?.close();
  await nats?.stop();
});

describe('reads', () => {
  it("answers the swarm's nodes and a node's inspection from the server's agent", async () => {
    const nodes = await ok(t.call, 'cluster.getNodes', { serverId });
    expect(nodes).toEqual([expect.objectContaining({ id: NODE, role: 'manager', self: true })]);
    expect(await ok(t.call, 'cluster.getNodeInfo', { serverId, nodeId: NODE })).toEqual({ ID: NODE });
    expect(await ok(t.call, 'cluster.getNodes', {})).toHaveLength(1);
    expect(requests.at(-1)!.serverId).toBe('local');
  });

  it("lists, in getNodeApps, only the caller organization's workloads", async () => {
    const apps = await ok(t.call, 'cluster.getNodeApps', { serverId });
    expect(apps.map((a: { id: string }) => a.id)).toEqual([ownApp]);
    expect(apps[0].tasks).toEqual([expect.objectContaining({ nodeId: NODE, hostname: 'h1' })]);
  });

  it('answers NOT_FOUND for a node the swarm does not have, BAD_REQUEST naming nodeId for one that is no node id', async () => {
    const unknown = await t.call('cluster.getNodeInfo', { serverId, nodeId: 'zzzzzzzzzzzzzzzzzzzzzzzzz' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(`server ${serverId}`);
    const malformed = await t.call('cluster.getNodeInfo', { serverId, nodeId: 'not a node' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.issues).toEqual([expect.objectContaining({ path: ['nodeId'] })]);
  });

  it('says which server did not answer when its agent is offline', async () => {
    const r = await t.call('cluster.getNodes', { serverId: silentServerId });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(`server ${silentServerId}`);
  });
});

describe('join commands and removal', () => {
  it('answers the join command of each role', async () => {
    expect(await ok(t.call, 'cluster.addWorker', { serverId })).toMatchObject({ role: 'worker', token: SECRET_TOKEN, managerAddress: '10.0.0.1:2377' });
    const manager = await ok(t.call, 'cluster.addManager', { serverId: 'local' });
    expect(manager.command).toBe(`docker swarm join --token ${SECRET_TOKEN} 10.0.0.1:2377`);
    const last = requests.at(-1)!;
    expect(last.serverId).toBe('local');
    expect(last.request.request).toMatchObject({ $case: 'cluster', value: { operation: ClusterOperation.CLUSTER_OPERATION_JOIN_MANAGER } });
  });

  it('removes a node through the agent, with a drain deadline shorter than its own', async () => {
    const removed = await ok(t.call, 'cluster.removeNode', { serverId, nodeId: NODE });
    expect(removed).toEqual({ nodeId: NODE, hostname: 'h2', movedTasks: 2 });
    const sent = requests.at(-1)!.request.request;
    expect(sent?.$case === 'cluster' && sent.value.drainTimeoutMs).toBeGreaterThan(0);
  });

  it('refuses a malformed node id naming nodeId, without asking the agent', async () => {
    const before = requests.length;
    const r = await t.call('cluster.removeNode', { serverId, nodeId: '../../swarm/leave' });
    expect(r.status).toBe(400);
    expect(r.body.issues).toEqual([expect.objectContaining({ path: ['nodeId'] })]);
    expect(requests.length).toBe(before);
  });
});

describe('access', () => {
  const operations: [string, Record<string, unknown>][] = [
    ['cluster.getNodes', {}],
    ['cluster.getNodeInfo', { nodeId: NODE }],
    ['cluster.getNodeApps', {}],
    ['cluster.addWorker', {}],
    ['cluster.addManager', {}],
    ['cluster.removeNode', { nodeId: NODE }],
  ];

  it("refuses another organization's administrator: the server does not exist for them, the platform host is forbidden", async () => {
    const before = requests.length;
    const other = t.as(otherAdminKey);
    for (const [op, input] of operations) {
      expect((await other(op, { ...input, serverId })).status, op).toBe(404);
      expect((await other(op, { ...input, serverId: 'local' })).status, `${op} local`).toBe(403);
    }
    for (const op of ['cluster.getNodes', 'cluster.getNodeApps']) expect((await other(op, {})).status, op).toBe(403);
    expect(requests.length).toBe(before);
  });

  it('refuses a member of the organization, even one granted the server and canAccessToContainer', async () => {
    const member = await addMember(t, `member-${randomBytes(3).toString('hex')}@test.local`);
    await ok(t.call, 'user.assignPermissions', { id: member.userId, accessedServers: [serverId], canAccessToContainer: true });
    const before = requests.length;
    for (const [op, input] of operations) {
      expect((await t.as(member.key)(op, { ...input, serverId })).status, op).toBe(403);
    }
    expect(requests.length).toBe(before);
  });
});
