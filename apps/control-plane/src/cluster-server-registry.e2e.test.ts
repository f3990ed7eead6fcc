// A server whose swarm is two machines and which has no registry configured, end to end
// (testing/process-stack.ts; the engines of libs/testing swarm-pair.ts, as in
// cluster.e2e.test.ts). The agent starts its own registry at the first build that needs it
// (deployments/server-registry.ts): `skiff-registry` on the manager (and its storage served
// read-only on the overlay network) and a pull-through mirror on each node, both published on
// the nodes' loopback, behind the agent's login. A 2-replica application
// built from git runs one task on each node, named by digest from the mirror, and both answer.
// Without the login the mirror refuses another container; the login is in no log. The engines (and with
// them the registry's services, volumes and secrets), namespaces, git server and the agent's
// data directory are removed at the end.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitServer, startSwarmPair, waitFor, type SwarmPair, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from './testing/process-stack.js';

let pair: SwarmPair;
let git: TestGitServer;
let s: ProcessStack;
const agentDir = mkdtempSync(join(tmpdir(), 'skiff-server-registry-agent-'));

beforeAll(async () => {
  pair = await startSwarmPair({ images: ['busybox:latest', 'caddy:2', 'registry:2'] });
  git = await startGitServer();
  s = await startProcessStack({
    label: 'server-registry',
    agentEnv: { SKIFF_DOCKER_SOCKET: pair.manager.socket, SKIFF_AGENT_DATA_DIR: agentDir },
  });
}, 240_000);

afterAll(async () => {
  await s?.close();
  await git?.stop();
  await pair?.stop();
  rmSync(agentDir, { recursive: true, force: true });
}, 120_000);

type Node = { id: string; self: boolean; state: string };
type App = { name: string; tasks: { nodeId: string; state: string }[] };

async function pageOn(engine: SwarmPair['manager'], appName: string): Promise<string | null> {
  const id = (await engine.docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${appName}`])).out.split('\n').find(Boolean);
  if (!id) return null;
  return (await engine.docker(['exec', id, 'wget', '-q', '-O', '-', 'http://127.0.0.1:8080/'])).out;
}

describe('a server of two machines without a configured registry', () => {
  it('runs its own registry, pushes the build there, and runs one task on each node by digest', async () => {
    const command = await s.ok('cluster.addWorker', { serverId: 'local' });
    const joined = await pair.worker.docker(['swarm', 'join', '--token', command.token, '--advertise-addr', pair.worker.address, command.managerAddress], 60_000);
    expect(joined.ok, joined.err).toBe(true);
    const both = await waitFor(async () => {
      const list = (await s.ok('cluster.getNodes', { serverId: 'local' })) as Node[];
      return list.length === 2 && list.every((n) => n.state === 'ready') ? list : null;
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'both nodes to be ready' });

    const repo = await git.createRepo(`server-registry-${s.run}`, {
      Dockerfile: ['FROM busybox:latest', `RUN mkdir -p /www && echo "own ${s.run}" > /www/index.html`, 'CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]', ''].join('\n'),
    });
    const app = await s.ok('application.create', { name: 'own', appName: `own-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
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
    const ended = await s.deploymentEnd(app.applicationId, queued.deploymentId, 300_000);
    const log = JSON.stringify(await s.ok('deployment.readLogs', { deploymentId: queued.deploymentId }));
    expect(ended.status, log).toBe('done');
    expect(log).toContain("Pushed the image to the server's own registry for the 2 nodes of this server's swarm");

    // The registry and its read-only side on the manager, a mirror on each node.
    for (const service of ['skiff-registry', 'skiff-registry-reader']) {
      const tasks = (await pair.manager.docker(['service', 'ps', '--filter', 'desired-state=running', '--format', '{{.CurrentState}}', service])).out.split('\n');
      expect(tasks.filter((t) => t.startsWith('Running'))).toHaveLength(1);
    }
    const mirrors = (await pair.manager.docker(['service', 'ps', '--filter', 'desired-state=running', '--format', '{{.CurrentState}}', 'skiff-registry-mirror'])).out.split('\n');
    expect(mirrors.filter((m) => m.startsWith('Running'))).toHaveLength(2);

    // Named by digest on the mirror's loopback address; one running task on each node.
    const image = (await pair.manager.docker(['service', 'inspect', '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}', app.appName])).out;
    expect(image).toMatch(new RegExp(`^127\\.0\\.0\\.1:5031/${app.appName}:[^@]+@sha256:[0-9a-f]{64}$`));
    const listed = await waitFor(async () => {
      const apps = (await s.ok('cluster.getNodeApps', { serverId: 'local' })) as App[];
      const mine = apps.find((a) => a.name === app.appName);
      return mine && mine.tasks.filter((t) => t.state === 'running').length === 2 ? mine : null;
    }, { timeoutMs: 90_000, intervalMs: 500, what: 'two running tasks' });
    expect(new Set(listed.tasks.map((t) => t.nodeId))).toEqual(new Set(both.map((n) => n.id)));
    expect(await pageOn(pair.manager, app.appName)).toBe(`own ${s.run}`);
    expect(await pageOn(pair.worker, app.appName)).toBe(`own ${s.run}`);

    // Another container on the worker reaches the mirror's port on the node's address, and
    // gets nothing without the agent's login; the read-only registry publishes no port.
    const digest = image.split('@')[1]!;
    const anonymous = await pair.worker.docker(['run', '--rm', 'busybox:latest', 'wget', '-S', '-O', '-', `http://${pair.worker.address}:5031/v2/${app.appName}/manifests/${digest}`], 60_000);
    expect(anonymous.ok).toBe(false);
    expect(anonymous.err).toContain('401 Unauthorized');
    const reader = await pair.manager.docker(['service', 'inspect', '--format', '{{json .Endpoint.Ports}}', 'skiff-registry-reader']);
    expect(reader.out).toBe('null');

    const { password } = JSON.parse(readFileSync(join(agentDir, 'server-registry.json'), 'utf8')) as { password: string };
    expect(password.length).toBeGreaterThan(20);
    expect(s.agent.output()).not.toContain(password);
    expect(s.controlPlane.output()).not.toContain(password);
    expect(log).not.toContain(password);
  }, 600_000);
});
