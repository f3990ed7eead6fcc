/**
 * Cluster requests (ClusterControl over DockerodeSwarmNodes) against the real engine, a
 * single-node swarm here (two nodes: apps/control-plane/src/cluster.e2e.test.ts): its nodes,
 * a node's inspection, the Skiff services with the nodes of their tasks, join commands, and
 * what a removal refuses; last, the same through NATS to a running agent. The one service it
 * creates has a name of this run and is removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { ClusterOperation, type ClusterRequest, type ControlReply } from '@skiff/proto';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { DockerodeSwarmNodes } from '../docker/swarm-nodes.js';
import { ensureCommandStream, removeServerChannel, requestControl } from '../testing/nats.js';
import { startReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';
import { ClusterControl } from './cluster-control.js';

const run = randomBytes(3).toString('hex');
const service = `cc-web-${run}`;
const workloadId = `app-${run}`;
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const nodes = new DockerodeSwarmNodes(docker);
const control = new ClusterControl({ nodes, log, drainTimeoutMs: 5_000, pollIntervalMs: 100 });
let selfId = '';

const ask = (request: Partial<ClusterRequest>) =>
  control.handle({ operation: ClusterOperation.CLUSTER_OPERATION_UNSPECIFIED, nodeId: '', drainTimeoutMs: 0, ...request });
const result = (reply: ControlReply): any => {
  expect(reply.error).toBe('');
  return JSON.parse(reply.cluster!.resultJson);
};

beforeAll(async () => {
  selfId = ((await docker.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
  await docker.createService({
    Name: service,
    Labels: { 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': workloadId },
    TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Command: ['sh', '-c', 'while true; do sleep 1; done'] } },
    Mode: { Replicated: { Replicas: 1 } },
  } as Dockerode.CreateServiceOptions);
}, 60_000);

/** Folders the test agents journal in, removed at the end. */
const tempDirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cc-'));
  tempDirs.push(dir);
  return dir;
};

afterAll(async () => {
  await docker.getService(service).remove().catch(() => undefined);
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('ClusterControl', () => {
  it('lists the nodes of the swarm, this one marked', async () => {
    const list = result(await ask({ operation: ClusterOperation.CLUSTER_OPERATION_LIST_NODES }));
    const self = list.find((n: { id: string }) => n.id === selfId);
    expect(self).toMatchObject({ role: 'manager', availability: 'active', state: 'ready', self: true, leader: true });
    expect(self.hostname).not.toBe('');
    expect(self.engineVersion).not.toBe('');
  });

  it('inspects a node, and refuses an unknown or malformed node id naming node_id', async () => {
    expect(result(await ask({ operation: ClusterOperation.CLUSTER_OPERATION_INSPECT_NODE, nodeId: selfId }))).toMatchObject({ ID: selfId });
    const unknown = await ask({ operation: ClusterOperation.CLUSTER_OPERATION_INSPECT_NODE, nodeId: 'a'.repeat(25) });
    expect(unknown.error).toMatch(/no node a{25}/);
    expect(unknown.cluster).toMatchObject({ refusedField: 'node_id', notFound: true });
    const malformed = await ask({ operation: ClusterOperation.CLUSTER_OPERATION_INSPECT_NODE, nodeId: '../../info' });
    expect(malformed.error).toMatch(/node_id must be a swarm node id/);
    expect(malformed.cluster).toMatchObject({ refusedField: 'node_id', notFound: false });
  });

  it('lists the Skiff services with the nodes their tasks run on', async () => {
    const listed = await waitUntil('the service task to run', async () => {
      const services = result(await ask({ operation: ClusterOperation.CLUSTER_OPERATION_LIST_SERVICES }));
      const mine = services.find((s: { name: string }) => s.name === service);
      return mine?.tasks.some((t: { state: string }) => t.state === 'running') ? mine : undefined;
    });
    expect(listed).toMatchObject({ kind: 'application', id: workloadId, image: 'busybox:latest', replicas: 1 });
    expect(listed.tasks).toEqual([expect.objectContaining({ nodeId: selfId, state: 'running', desiredState: 'running' })]);
    expect(listed.tasks[0].hostname).not.toBe('');
  }, 60_000);

  it('answers join commands with the swarm token of the role and the manager address', async () => {
    const tokens = (await docker.swarmInspect()) as { JoinTokens: { Worker: string; Manager: string } };
    const worker = result(await ask({ operation: ClusterOperation.CLUSTER_OPERATION_JOIN_WORKER }));
    const manager = result(await ask({ operation: ClusterOperation.CLUSTER_OPERATION_JOIN_MANAGER }));
    expect(worker).toMatchObject({ role: 'worker', token: tokens.JoinTokens.Worker });
    expect(manager).toMatchObject({ role: 'manager', token: tokens.JoinTokens.Manager });
    expect(worker.managerAddress).toMatch(/^[\d.:[\]a-f]+:\d+$/);
    expect(worker.command).toBe(`docker swarm join --token ${tokens.JoinTokens.Worker} ${worker.managerAddress}`);
  });

  it("refuses to remove this agent's own node or one the swarm does not have", async () => {
    const self = await ask({ operation: ClusterOperation.CLUSTER_OPERATION_REMOVE_NODE, nodeId: selfId });
    expect(self.error).toMatch(/cannot be removed/);
    expect(self.cluster?.refusedField).toBe('node_id');
    const unknown = await ask({ operation: ClusterOperation.CLUSTER_OPERATION_REMOVE_NODE, nodeId: 'b'.repeat(25) });
    expect(unknown.cluster).toMatchObject({ refusedField: 'node_id', notFound: true });
    const node = (await docker.getNode(selfId).inspect()) as { Spec: { Availability: string } };
    expect(node.Spec.Availability).toBe('active');
  });

  it('refuses a request naming no operation', async () => {
    const reply = await ask({});
    expect(reply.error).toMatch(/no operation this agent knows/);
  });
});

describe('through NATS', () => {
  it("answers cluster requests on the agent's control subject", async () => {
    const serverId = `srv-cc-${run}`;
    const nc = await connect({ servers: inject('natsUrl') });
    await ensureCommandStream(nc);
    const reportServer = await startReportServer();
    const { stop } = await startTestAgent({
      serverId,
      nc,
      driver: new DockerodeDriver({ docker }),
      nodes,
      journalDir: join(tempDir(), 'agent'),
      reportTarget: reportServer.target,
      credential: `cred-${run}`,
      log,
      maxConcurrentDeploys: 1,
    });
    try {
      const reply = await requestControl(nc, serverId, {
        request: { $case: 'cluster', value: { operation: ClusterOperation.CLUSTER_OPERATION_LIST_NODES, nodeId: '', drainTimeoutMs: 0 } },
      });
      expect(result(reply).map((n: { id: string }) => n.id)).toContain(selfId);
    } finally {
      await stop();
      await reportServer.stop();
      await removeServerChannel(nc, serverId);
      await nc.close();
    }
  }, 60_000);
});
