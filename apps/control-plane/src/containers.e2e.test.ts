// container.* and the log streams end to end (testing/stack.ts): a deployed busybox
// application printing a numbered line every 200 ms, read by its owner and refused to another
// organization; a container Skiff does not manage is never restarted; a server whose agent
// is not connected is named in the error; a log stream's reader going away stops the agent's.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
let app: { applicationId: string; appName: string };
let deploymentId: string;
let outsider: TestStack['t']['call'];
let outsiderKey: string;
const SECRET = `ticker-secret-${Math.random().toString(36).slice(2)}`;

interface Item {
  containerId: string;
  name: string;
  state: string;
  labels: Record<string, string>;
  serviceName: string | null;
}

beforeAll(async () => {
  s = await startTestStack('containers');
  s.t.watch.secret(SECRET);
  app = await s.containerApplication('ticker', { containerImage: 'busybox:latest' });
  const updated = await s.t.call('application.update', {
    applicationId: app.applicationId,
    env: `TOKEN=${SECRET}`,
    command: 'sh',
    args: ['-c', 'i=0; while true; do i=$((i+1)); echo "tick $i"; echo "warn $i" >&2; sleep 0.2; done'],
  });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  const deployed = await s.deployAndWait(app.applicationId);
  expect(deployed.status).toBe('done');
  deploymentId = deployed.deploymentId;
  const other = await s.t.call('organization.create', { name: `other-${s.run}` });
  outsiderKey = (await s.t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
  s.t.watch.secret(outsiderKey);
  outsider = s.t.as(outsiderKey);
}, 240_000);
afterAll(() => s?.close(), 60_000);

const running = async (): Promise<Item> =>
  waitFor(
    async () => ((await s.t.call('container.getContainers', {})).body as Item[]).find((c) => c.labels['skiff.id'] === app.applicationId && c.state === 'running') ?? null,
    { timeoutMs: 30_000, what: 'the running container of the application' },
  );

/** Opens a log stream as a client would; `take` reads events until `until` says stop, then the client goes away. */
async function openLogs(path: string, key: string | null = s.t.ownerKey) {
  const aborter = new AbortController();
  const res = await s.t.platform.app.fetch(new Request(`http://skiff.test${path}`, { headers: key ? { 'x-api-key': key } : {}, signal: aborter.signal }));
  const take = async (until: (events: Array<{ event: string; data: Record<string, string> }>) => boolean) => {
    const reader = res.body!.getReader();
    const events: Array<{ event: string; data: Record<string, string> }> = [];
    let buffer = '';
    const decoder = new TextDecoder();
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Record<string, string>;
        events.push({ event, data });
      }
    }
    await reader.cancel();
    aborter.abort();
    return events;
  };
  return { res, take };
}

const ended = (events: Array<{ event: string }>) => events.some((e) => e.event === 'end');

describe('container operations', () => {
  it("list the application's task for its owner, in every listing that matches it", async () => {
    const item = await running();
    expect(item).toMatchObject({ serviceName: app.appName, labels: { 'skiff.managed': 'true', 'skiff.kind': 'application' } });
    const byService = (await s.t.call('container.getServiceContainersByAppName', { appName: app.appName })).body as Item[];
    const byLabel = (await s.t.call('container.getContainersByAppLabel', { appName: app.appName, type: 'cluster' })).body as Item[];
    const byName = (await s.t.call('container.getContainersByAppNameMatch', { appName: app.appName })).body as Item[];
    for (const list of [byService, byLabel, byName]) expect(list.map((c) => c.containerId)).toContain(item.containerId);
    expect((await s.t.call('container.getContainersByAppLabel', { appName: app.appName, type: 'standalone' })).body).toEqual([]);
  });

  it('answer the inspect document with environment values redacted', async () => {
    const item = await running();
    const res = await s.t.call('container.getConfig', { containerId: item.containerId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.Config.Env).toContain('TOKEN=<redacted>');
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
  });

  it("show another organization none of it, and refuse it the container as unknown", async () => {
    const item = await running();
    expect(((await outsider('container.getContainers', {})).body as Item[]).map((c) => c.containerId)).not.toContain(item.containerId);
    const config = await outsider('container.getConfig', { containerId: item.containerId });
    const restart = await outsider('container.restartContainer', { containerId: item.containerId });
    const unknown = await s.t.call('container.getConfig', { containerId: `nothing-${s.run}` });
    for (const res of [config, restart, unknown]) expect(res.status).toBe(404);
    expect(config.body.message).toBe(unknown.body.message);
    expect((await docker(['inspect', '-f', '{{.State.Running}}', item.containerId])).out).toBe('true');
  });

  it("restart the owner's container, and never one Skiff does not manage", async () => {
    const item = await running();
    const before = (await docker(['inspect', '-f', '{{.State.StartedAt}}', item.containerId])).out;
    const res = await s.t.call('container.restartContainer', { containerId: item.containerId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await docker(['inspect', '-f', '{{.State.StartedAt}}', item.containerId])).out).not.toBe(before);

    const stranger = `stranger-${s.run}`;
    expect((await docker(['run', '-d', '--name', stranger, 'busybox:latest', 'sleep', '300'])).ok).toBe(true);
    try {
      const refused = await s.t.call('container.restartContainer', { containerId: stranger });
      expect(refused.status).toBe(404);
      expect(((await s.t.call('container.getContainers', {})).body as Item[]).map((c) => c.name)).not.toContain(stranger);
    } finally {
      await docker(['rm', '-f', stranger]);
    }
  }, 60_000);

  it('name the server whose agent is not connected', async () => {
    const server = await s.t.call('server.create', { name: `offline-${s.run}`, address: '203.0.113.40' });
    expect(server.status, JSON.stringify(server.body)).toBe(200);
    const res = await s.t.call('container.getContainers', { serverId: server.body.serverId });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`server ${server.body.serverId}`);
    expect(res.body.message).toMatch(/did not answer/);
  }, 30_000);
});

describe('log streams', () => {
  it("send a service's last lines, stdout and stderr, then end", async () => {
    await running();
    const { res, take } = await openLogs(`/api/logs.service?applicationId=${app.applicationId}&tail=4`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await take(ended);
    const lines = events.filter((e) => e.event === 'line').map((e) => e.data);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(lines.every((l) => /^(tick|warn) \d+$/.test(l.text!))).toBe(true);
    expect(events.at(-1)).toEqual({ event: 'end', data: { reason: 'end of log' } });
  }, 30_000);

  it("follow a container's new lines, and the agent stops reading when the client goes away", async () => {
    const item = await running();
    const marks = s.agentOutput().length;
    const { res, take } = await openLogs(`/api/logs.container?containerId=${item.containerId}&tail=0&follow=true`);
    expect(res.status).toBe(200);
    const events = await take((all) => all.filter((e) => e.event === 'line').length >= 5);
    const gone = Date.now();
    expect(events.filter((e) => e.data.stream === 'stdout').length).toBeGreaterThan(0);
    await waitFor(() => /"msg":"log stream ended"/.test(s.agentOutput().slice(marks)) && /no longer reads the stream|stopped by the control plane/.test(s.agentOutput().slice(marks)), {
      timeoutMs: 15_000,
      what: "the agent's stream to end",
    });
    // At once (the chunk being taken is answered stop), not after the agent's 10 s chunk deadline.
    expect(Date.now() - gone).toBeLessThan(5_000);
  }, 40_000);

  it("send a deployment's stored log, and refuse what the caller may not read", async () => {
    const { take } = await openLogs(`/api/logs.deployment?deploymentId=${deploymentId}&follow=true`);
    const events = await take(ended);
    expect(events.some((e) => /Deployment done/.test(e.data.text ?? ''))).toBe(true);
    expect(events.at(-1)).toEqual({ event: 'end', data: { reason: 'deployment done' } });

    const item = await running();
    for (const path of [`/api/logs.service?applicationId=${app.applicationId}`, `/api/logs.container?containerId=${item.containerId}`, `/api/logs.deployment?deploymentId=${deploymentId}`]) {
      expect((await openLogs(path, outsiderKey)).res.status, path).toBe(404);
    }
    expect((await openLogs(`/api/logs.service?applicationId=${app.applicationId}`, null)).res.status).toBe(401);
    const bad = await openLogs(`/api/logs.service?applicationId=${app.applicationId}&tail=lots&extra=1`);
    expect(bad.res.status).toBe(400);
    const body = (await bad.res.json()) as { issues: Array<{ path: string[] }> };
    expect(body.issues.map((i) => i.path.join('.')).sort()).toEqual(['extra', 'tail']);
  }, 40_000);
});
