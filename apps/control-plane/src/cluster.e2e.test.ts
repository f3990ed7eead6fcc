// A server whose swarm is two machines, end to end (testing/process-stack.ts: NATS, the control
// plane and the agent as processes). Two Docker Engines, each in a network namespace of its own
// (libs/testing swarm-pair.ts; the machine's engine, shared by other tests, is not touched):
// the agent manages the first; the second joins as a worker with the command
// `cluster.addWorker` answers. A 2-replica application built from git (busybox's httpd) is
// pushed to the cluster registry (a docker-registry with a login, where both engines reach it)
// and runs one task on each node, named by digest; each task answers, also across the overlay
// network. `cluster.removeNode` drains the worker (its task moves to the manager) and removes
// it. Everything (engines, namespaces, registry, git server) is removed at the end.
import { startGitServer, startSwarmPair, startTestRegistry, waitFor, type SwarmPair, type TestGitServer, type TestRegistry } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from './testing/process-stack.js';

let pair: SwarmPair;
let registry: TestRegistry;
let git: TestGitServer;
let s: ProcessStack;

beforeAll(async () => {
  pair = await startSwarmPair({ images: ['busybox:latest', 'caddy:2'] });
  registry = await startTestRegistry({ host: pair.hostAddress });
  git = await startGitServer();
  s = await startProcessStack({
    label: 'cluster',
    agentEnv: {
      SKIFF_DOCKER_SOCKET: pair.manager.socket,
      SKIFF_CLUSTER_REGISTRY: registry.address,
      SKIFF_CLUSTER_REGISTRY_USERNAME: registry.username,
      SKIFF_CLUSTER_REGISTRY_PASSWORD: registry.password,
    },
  });
}, 240_000);

afterAll(async () => {
  await s?.close();
  await git?.stop();
  await registry?.stop();
  await pair?.stop();
}, 120_000);

type Node = { id: string; hostname: string; role: string; state: string; availability: string; self: boolean };
type App = { name: string; id: string; image: string; tasks: { nodeId: string; state: string }[] };

const nodes = async () => (await s.ok('cluster.getNodes', { serverId: 'local' })) as Node[];

/** What the service's task on that engine answers on 8080 from inside its container, and its overlay address. */
async function taskOn(engine: SwarmPair['manager'], appName: string) {
  const id = (await engine.docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${appName}`])).out.split('\n').find(Boolean);
  if (!id) return null;
  const page = await engine.docker(['exec', id, 'wget', '-q', '-O', '-', 'http://127.0.0.1:8080/']);
  const networks = JSON.parse((await engine.docker(['inspect', '-f', '{{json .NetworkSettings.Networks}}', id])).out) as Record<string, { IPAddress: string }>;
  return { id, page: page.out, address: Object.values(networks)[0]?.IPAddress ?? '' };
}

describe('a server of two machines', () => {
  it('joins a worker with the command addWorker answers, builds once, runs one task on each node, and removes the worker', async () => {
    // The join command: the swarm's worker token and the manager's address in the swarm.
    const join = await s.ok('cluster.addWorker', { serverId: 'local' });
    expect(join).toMatchObject({ role: 'worker', managerAddress: `${pair.manager.address}:2377` });
    expect(join.command).toBe(`docker swarm join --token ${join.token} ${join.managerAddress}`);
    const joined = await pair.worker.docker(['swarm', 'join', '--token', join.token, '--advertise-addr', pair.worker.address, join.managerAddress], 60_000);
    expect(joined.ok, joined.err).toBe(true);

    const both = await waitFor(async () => {
      const list = await nodes();
      return list.length === 2 && list.every((n) => n.state === 'ready') ? list : null;
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'both nodes to be ready' });
    const manager = both.find((n) => n.self)!;
    const worker = both.find((n) => !n.self)!;
    expect(manager.role).toBe('manager');
    expect(worker.role).toBe('worker');
    expect(await s.ok('cluster.getNodeInfo', { serverId: 'local', nodeId: worker.id })).toMatchObject({ ID: worker.id, Spec: { Role: 'worker' } });

    // A 2-replica application built from git, spread over the nodes.
    const repo = await git.createRepo(`cluster-${s.run}`, {
      Dockerfile: ['FROM busybox:latest', `RUN mkdir -p /www && echo "built ${s.run}" > /www/index.html`, 'CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]', ''].join('\n'),
    });
    const app = await s.ok('application.create', { name: 'spread', appName: `spread-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
    await s.ok('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: repo.url, customGitBranch: 'main', customGitBuildPath: '/', watchPaths: null });
    await s.ok('application.saveBuildType', {
      applicationId: app.applicationId,
      buildType: 'containerfile',
      containerfile: 'Dockerfile',
      containerContextPath: '.',
      containerBuildStage: null,
      legacyVersion: null,
      packTwoVersion: null,
    });
    await s.ok('application.update', {
      applicationId: app.applicationId,
      replicas: 2,
      placementCluster: { Preferences: [{ Spread: { SpreadDescriptor: 'node.id' } }] },
      endpointSpecCluster: { Mode: 'dnsrr' },
    });
    const queued = await s.ok('application.deploy', { applicationId: app.applicationId });
    const ended = await s.deploymentEnd(app.applicationId, queued.deploymentId, 240_000);
    const log = JSON.stringify(await s.ok('deployment.readLogs', { deploymentId: queued.deploymentId }));
    expect(ended.status, log).toBe('done');
    expect(log).toContain("Pushed the image to the cluster registry for the 2 nodes of this server's swarm");

    // Named by the digest the cluster registry gave, one running task on each node.
    const image = (await pair.manager.docker(['service', 'inspect', '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}', app.appName])).out;
    expect(image).toMatch(new RegExp(`^${registry.address}/${app.appName}:[^@]+@sha256:[0-9a-f]{64}$`));
    const listed = await waitFor(async () => {
      const apps = (await s.ok('cluster.getNodeApps', { serverId: 'local' })) as App[];
      const mine = apps.find((a) => a.name === app.appName);
      return mine && mine.tasks.filter((t) => t.state === 'running').length === 2 ? mine : null;
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'two running tasks' });
    expect(listed).toMatchObject({ id: app.applicationId, image });
    expect(new Set(listed.tasks.map((t) => t.nodeId))).toEqual(new Set([manager.id, worker.id]));

    // Both answer, on their own node and across the overlay network.
    const onManager = await taskOn(pair.manager, app.appName);
    const onWorker = await taskOn(pair.worker, app.appName);
    expect(onManager?.page).toBe(`built ${s.run}`);
    expect(onWorker?.page).toBe(`built ${s.run}`);
    const across = await pair.manager.docker(['exec', onManager!.id, 'wget', '-q', '-O', '-', `http://${onWorker!.address}:8080/`]);
    expect(across.out).toBe(`built ${s.run}`);

    // Removal: drained (the task moves to the manager), then removed; the machine leaves.
    const removed = await s.ok('cluster.removeNode', { serverId: 'local', nodeId: worker.id });
    expect(removed).toEqual({ nodeId: worker.id, hostname: worker.hostname, movedTasks: 1 });
    expect((await nodes()).map((n) => n.id)).toEqual([manager.id]);
    const tasks = (await s.ok('cluster.getNodeApps', { serverId: 'local' })) as App[];
    const after = tasks.find((a) => a.name === app.appName)!;
    expect(after.tasks.filter((t) => t.state === 'running').map((t) => t.nodeId)).toEqual([manager.id, manager.id]);
    expect((await pair.worker.docker(['swarm', 'leave', '--force'], 60_000)).ok).toBe(true);

    // The registry's password is in no log.
    expect(s.agent.output()).not.toContain(registry.password);
    expect(s.controlPlane.output()).not.toContain(registry.password);
  }, 600_000);
});
