// The single host as `tools/up` starts it: NATS, the control plane on the embedded database
// and the local agent, each its own process. Checks the first boot, a deploy through all of
// them to the Docker Engine's swarm, a restart, and that stopping tools/up leaves nothing
// running.
import { connect as connectNats } from '@nats-io/transport-node';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ToolsUp, freePort, startToolsUp, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from './testing/harness.js';

const root = new URL('../../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-main-'));
const run = randomBytes(3).toString('hex');
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const services: string[] = [];
let ports: { api: number; grpc: number; nats: number; web: number };
let base = '';
let up: ToolsUp | undefined;
/** What tools/up printed, or why it did not start. */
let startFailure = '';
const output = () => up?.output() ?? startFailure;

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pid tools/up printed on a line such as `Local agent: server "local", pid 123, log …`. */
const printedPid = (prefix: string) => {
  const m = new RegExp(`${prefix}[^\\n]*?pid (\\d+)`).exec(output());
  expect(m, output()).not.toBeNull();
  return Number(m![1]);
};

/** Starts the whole single host with `tools/up`, on the embedded database. */
async function start() {
  up = undefined;
  up = await startToolsUp({ root, dataDir, ports, timeoutMs: 150_000 }).catch((err: Error) => {
    startFailure = err.message;
    throw err;
  });
}

/** The processes tools/up started: NATS, the local agent, the control plane. */
const startedPids = () => [
  printedPid('NATS \\(JetStream\\)'),
  printedPid('Local agent'),
  Number(readFileSync(join(dataDir, 'control-plane.pid'), 'utf8')),
];

/** Stops tools/up as SIGTERM (or Ctrl-C) would; answers its exit code. */
async function stop() {
  return up ? up.stop() : null;
}

/** Calls the API over HTTP: POST with a JSON body, or GET (the query string in `op`). */
const call = async (key: string, op: string, body?: unknown): Promise<Answer> => {
  const res = await fetch(`${base}/api/${op}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

beforeAll(async () => {
  ports = { api: await freePort(), grpc: await freePort(), nats: await freePort(), web: await freePort() };
  base = `http://127.0.0.1:${ports.api}`;
});

afterAll(async () => {
  await stop();
  for (const name of services) await new Promise<void>((resolve) => execFile(dockerCli, ['service', 'rm', name], () => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

describe('tools/up', () => {
  let key = '';

  it('starts NATS, the control plane and the local agent; prints the API address and a working first API key, saved 0600', async () => {
    await start();
    const m = /\n\s+(skf_[A-Za-z0-9_-]+)\n/.exec(output());
    expect(m, output()).not.toBeNull();
    key = m![1]!;
    expect(output()).toContain(`Skiff API: ${base}/api`);
    expect(output()).toContain(`NATS (JetStream): tls://127.0.0.1:${ports.nats}`);
    expect(output()).toContain(`Agent channel TLS: CA ${join(dataDir, 'tls', 'ca.pem')}`);
    const file = join(dataDir, 'initial-api-key');
    expect(readFileSync(file, 'utf8').trim()).toBe(key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'local-agent.credential')).mode & 0o777).toBe(0o600);
    const agentLog = readFileSync(join(dataDir, 'logs', 'agent.log'), 'utf8');
    expect(agentLog).toContain('agent started: connected to NATS');
    expect(agentLog).not.toContain(readFileSync(join(dataDir, 'local-agent.credential'), 'utf8').trim());
    expect(readFileSync(join(dataDir, 'logs', 'nats.log'), 'utf8')).toContain('Starting JetStream');
    // It runs the control plane and the agent on the supported Node it names (ensure_node).
    const node = /==> node (v\d+\.\d+\.\d+) \((.+)\)\n/.exec(output());
    expect(Number(node?.[1]?.slice(1).split('.')[0]), output()).toBeGreaterThanOrEqual(22);
    for (const pid of startedPids().slice(1)) {
      expect(execFileSync(readlinkSync(`/proc/${pid}/exe`), ['-v'], { encoding: 'utf8' }).trim()).toBe(node![1]);
    }
    // NATS runs with TLS only, in operator mode: nobody gets in without credentials, and they are not world-readable.
    const ca = readFileSync(join(dataDir, 'tls', 'ca.pem'), 'utf8');
    await expect(connectNats({ servers: `tls://127.0.0.1:${ports.nats}`, tls: { ca }, reconnect: false, timeout: 3_000 })).rejects.toThrow(/Authorization/i);
    await expect(connectNats({ servers: `nats://127.0.0.1:${ports.nats}`, tls: null, reconnect: false, timeout: 3_000 })).rejects.toThrow();
    expect(statSync(join(dataDir, 'nats', 'auth', 'account.nk')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'nats', 'auth', 'control-plane.creds')).mode & 0o777).toBe(0o600);

    expect((await fetch(`${base}/health`)).status).toBe(200);
    const res = await call(key, 'project.create', { name: 'first', env: 'KEEP=me' });
    expect(res.status).toBe(200);
    const anonymous = await fetch(`${base}/api/project.all`);
    expect(anonymous.status).toBe(401);
  }, 180_000);

  it('deploys an application through NATS, the local agent and the swarm', async () => {
    const env = (await call(key, 'project.all')).body[0].environments[0].environmentId as string;
    const app = (await call(key, 'application.create', { name: 'hello', appName: `up-${run}`, environmentId: env, sourceType: 'container' })).body;
    services.push(app.appName);
    await call(key, 'application.saveContainerProvider', {
      applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null,
    });
    const updated = await call(key, 'application.update', {
      applicationId: app.applicationId,
      command: 'sh',
      args: ['-c', 'mkdir -p /www && echo hello from skiff > /www/index.html && exec httpd -f -p 8080 -h /www'],
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: ports.web, PublishMode: 'host' }] },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const queued = await call(key, 'application.deploy', { applicationId: app.applicationId });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const deployment = await waitFor(
      async () => {
        const all = (await call(key, `deployment.all?applicationId=${app.applicationId}`)).body as { status: string }[];
        return all[0] && ['done', 'error', 'cancelled'].includes(all[0].status) ? all[0] : null;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the deployment to end' },
    );
    expect(deployment.status).toBe('done');
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${ports.web}/`).then((r) => r.text()).catch(() => '')).trim() === 'hello from skiff',
      { timeoutMs: 30_000, what: 'the page to be served' },
    );
  }, 180_000);

  it('restarts the control plane for settings.reloadServer (agent and NATS keep running); updateServer finds the agent current', async () => {
    const [natsPid, agentPid, cpPid] = startedPids();
    const answer = await call(key, 'settings.reloadServer', {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const restarted = await waitFor(
      async () => {
        const pid = Number(readFileSync(join(dataDir, 'control-plane.pid'), 'utf8'));
        const healthy = await fetch(`${base}/health`).then((r) => r.ok, () => false);
        return pid !== cpPid && healthy ? pid : null;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the control plane to be started again by tools/up' },
    );
    expect(running(cpPid)).toBe(false);
    expect(running(restarted)).toBe(true);
    expect([running(natsPid), running(agentPid)]).toEqual([true, true]);
    await waitFor(async () => output().includes('skiff: control plane restarted'), { timeoutMs: 30_000, what: 'tools/up to say it restarted the control plane' });
    const updated = await call(key, 'settings.updateServer', {});
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.agents).toEqual([{ serverId: 'local', status: 'current', detail: 'runs 0.1.0' }]);
  }, 180_000);

  it('stops the agent, the control plane and NATS when stopped, and leaves none running', async () => {
    const pids = startedPids();
    expect(pids.every(running)).toBe(true);
    expect(await stop()).toBe(0);
    expect(pids.filter(running)).toEqual([]);
    expect(output()).toContain('skiff: stopping');
  }, 120_000);

  it('keeps data and the key across a restart and prints no new key', async () => {
    await start();
    expect(output()).not.toMatch(/\n\s+skf_/);
    expect(output()).toContain('The first API key is in');
    const res = await fetch(`${base}/api/project.all`, { headers: { authorization: `Bearer ${key}` } });
    const projects = await res.json();
    expect(projects).toMatchObject([{ name: 'first', env: 'KEEP=me' }]);
  }, 180_000);
});
