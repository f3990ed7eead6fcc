// Events (issue 16, section 1): recorded in the transaction of their change, delivered once to
// each subscribed channel through the durable queue (retries, independent channels), listed by
// notification.deliveries, streamed at /api/events; receiveNotification records threshold events.
import { CommandStatus, DeploymentStatus, timestampFromDate } from '@skiff/proto';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSink, jsonSender } from '../../testing/event-sink.js';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { SseReader } from '../../testing/sse-reader.js';

const NO_FLAGS = {
  appBuildError: false,
  databaseBackup: false,
  platformBackup: false,
  volumeBackup: false,
  platformRestart: false,
  appDeploy: false,
  containerCleanup: false,
  serverThreshold: false,
};

let t: TestPlatform;
let sink: EventSink;
let env: string;
beforeAll(async () => {
  sink = await EventSink.start();
  t = await startTestPlatform({
    events: {
      senders: { hook: jsonSender },
      worker: { pollMs: 100, backoff: { minMs: 300, maxMs: 2000 }, sendTimeoutMs: 1500, leaseMs: 10_000 },
      stream: { heartbeatMs: 300, pollMs: 200 },
    },
  });
  env = (await ok('project.create', { name: 'events' })).environments[0].environmentId;
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

async function ok(op: string, input: Record<string, unknown>, call = t.call) {
  const r = await call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
}

/** A hook channel posting to `path` on the sink, subscribed to `flags`. */
async function channel(path: string, flags: Partial<typeof NO_FLAGS>, call = t.call) {
  const url = `${sink.url}${path}`;
  t.watch.secret(url);
  return (await ok('notification.createHook', { ...NO_FLAGS, ...flags, name: path, webhookUrl: url, channel: '#ops' }, call)) as { notificationId: string };
}

async function containerApp(name: string, environmentId = env, call = t.call) {
  const app = await ok('application.create', { name, environmentId }, call);
  await ok('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null }, call);
  return app as { applicationId: string; name: string };
}

/** Deploys and ends the deployment as its agent reports it (running, then `end`). */
async function deployAndEnd(applicationId: string, end: 'done' | 'error', call = t.call) {
  const { deploymentId } = await ok('application.deploy', { applicationId }, call);
  const command = await t.db.selectFrom('commands').select('id').where('deploymentId', '=', deploymentId).executeTakeFirstOrThrow();
  const report = (sequence: number, status: DeploymentStatus, reason = '') =>
    t.platform.reports.applyEvent('local', { deploymentId, commandId: command.id, sequence: String(sequence), status, logLines: [], reason, occurredAt: timestampFromDate(new Date()) });
  await report(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING);
  await report(2, end === 'done' ? DeploymentStatus.DEPLOYMENT_STATUS_DONE : DeploymentStatus.DEPLOYMENT_STATUS_ERROR, end === 'error' ? 'the build failed: npm ci exited with 1' : '');
  return deploymentId as string;
}

const settle = () => waitFor(async () => (await t.db.selectFrom('eventDeliveries').select('id').where('status', '=', 'pending').execute()).length === 0, { timeoutMs: 15_000, what: 'no pending deliveries' });

describe('a deployment that fails its build', () => {
  it('sends exactly one message to each subscribed channel, none to the others or to another organization', async () => {
    const a = await channel('/fail-a', { appBuildError: true });
    const b = await channel('/fail-b', { appBuildError: true, appDeploy: true });
    await channel('/fail-deploys-only', { appDeploy: true });
    const other = await ok('organization.create', { name: 'Other' });
    const otherKey = t.watch.secret((await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key);
    await channel('/fail-other-org', { appBuildError: true, appDeploy: true }, t.as(otherKey));

    const app = await containerApp('shop-web');
    const deploymentId = await deployAndEnd(app.applicationId, 'error');

    await waitFor(() => sink.at('/fail-a').length === 1 && sink.at('/fail-b').length === 1, { what: 'a message on each subscribed channel' });
    await settle();
    expect(sink.at('/fail-a')).toHaveLength(1);
    expect(sink.at('/fail-b')).toHaveLength(1);
    expect(sink.at('/fail-deploys-only')).toHaveLength(0);
    expect(sink.at('/fail-other-org')).toHaveLength(0);

    const message = sink.at('/fail-a')[0]!;
    expect(message.body).toMatchObject({ kind: 'appBuildError', title: 'Deploy failed: shop-web', outcome: 'failure', notificationId: a.notificationId });
    expect(message.body.text).toContain('the build failed: npm ci exited with 1');
    expect(message.body.fields).toContainEqual(['Deployment', deploymentId]);
    expect(message.body.fields).toContainEqual(['Project', 'events']);
    // The idempotency key is the delivery's id, the same for every attempt.
    const delivery = await t.db.selectFrom('eventDeliveries').selectAll().where('notificationId', '=', b.notificationId).executeTakeFirstOrThrow();
    expect(sink.at('/fail-b')[0]!.idempotencyKey).toBe(delivery.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, lastError: null });

    const event = await t.db.selectFrom('events').selectAll().where('id', '=', delivery.eventId as never).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ organizationId: t.organizationId, kind: 'appBuildError', outcome: 'failure', workloadKind: 'application', workloadId: app.applicationId, workloadName: 'shop-web' });
  });

  it('and a deployment that succeeds goes to the channels subscribed to appDeploy', async () => {
    await channel('/deploys', { appDeploy: true });
    const app = await containerApp('shop-api');
    await deployAndEnd(app.applicationId, 'done');
    await waitFor(() => sink.at('/deploys').length === 1, { what: 'the deploy message' });
    expect(sink.at('/deploys')[0]!.body).toMatchObject({ kind: 'appDeploy', title: 'Deployed: shop-api', outcome: 'success' });
  });
});

describe('other sources', () => {
  it('a compose stack whose deploy fails is an appBuildError of the stack, through the command result path', async () => {
    await channel('/compose-errors', { appBuildError: true });
    const stack = await ok('compose.create', { name: 'shop-stack', environmentId: env, composeFile: 'services:\n  web:\n    image: busybox:latest\n' });
    const { deploymentId } = await ok('compose.deploy', { composeId: stack.composeId });
    const command = await t.db.selectFrom('commands').select('id').where('deploymentId', '=', deploymentId).executeTakeFirstOrThrow();
    await t.platform.reports.applyCommandResult('local', { commandId: command.id, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'pull access denied', finishedAt: timestampFromDate(new Date()) });
    await waitFor(() => sink.at('/compose-errors').length === 1, { what: 'the compose error message' });
    expect(sink.at('/compose-errors')[0]!.body).toMatchObject({ kind: 'appBuildError', title: 'Deploy failed: shop-stack' });
    expect(sink.at('/compose-errors')[0]!.body.text).toContain('Compose stack shop-stack failed to deploy.\nReason: pull access denied');
  });

  it('the restart event reaches the channels subscribed to platformRestart', async () => {
    await channel('/restarts', { platformRestart: true });
    expect(await t.platform.events.service.platformRestarted('9.9.9')).toBeGreaterThanOrEqual(1);
    await waitFor(() => sink.at('/restarts').length === 1, { what: 'the restart message' });
    expect(sink.at('/restarts')[0]!.body).toMatchObject({ kind: 'platformRestart', outcome: 'info', title: 'Skiff restarted: control plane' });
  });

  it("a server's threshold alert and its cleanup reach its organization's channels; the platform host's go to its platform admins' organizations", async () => {
    await channel('/host-events', { serverThreshold: true, containerCleanup: true });
    const server = await ok('server.create', { name: 'alerting', address: '203.0.113.77' });
    await t.platform.events.service.serverThreshold(server.serverId, 'memory', 97.25, 90, 'crossed');
    await t.platform.events.service.containerCleanup(server.serverId, { removedContainers: ['c1'], removedImages: ['i1', 'i2'], removedVolumes: [], spaceFreed: 1024 }, 'cleanAll');
    // The platform host (no server record): the owner is its platform admin, so this organization hears of it too.
    await t.platform.events.service.serverThreshold('local', 'cpu', 99, 80, 'crossed');
    await waitFor(() => sink.at('/host-events').length >= 3, { what: 'the three host messages' });
    const kinds = sink.at('/host-events').map((m) => m.body.kind as string).sort();
    expect(kinds).toEqual(['containerCleanup', 'serverThreshold', 'serverThreshold']);
    const rows = await t.db
      .selectFrom('events')
      .select(['kind', 'serverId', 'summary'])
      .where('kind', 'in', ['serverThreshold', 'containerCleanup'])
      .where('organizationId', '=', t.organizationId)
      .orderBy('id')
      .execute();
    expect(rows.slice(-3)).toMatchObject([
      { kind: 'serverThreshold', serverId: server.serverId, summary: { type: 'memory', value: 97.3, threshold: 90, state: 'crossed', serverType: 'Remote' } },
      { kind: 'containerCleanup', serverId: server.serverId, summary: { trigger: 'cleanAll', removedContainers: 1, removedImages: 2, spaceFreed: 1024 } },
      { kind: 'serverThreshold', serverId: null, summary: { type: 'cpu', serverType: 'Platform' } },
    ]);
  });
});

describe('delivery', () => {
  it('retries with backoff after the channel answers 500, then delivers once; the error is listed meanwhile', async () => {
    const ch = await channel('/flaky', { appBuildError: true });
    sink.answer('/flaky', 500, 500, 200);
    const app = await containerApp('flaky-app');
    await deployAndEnd(app.applicationId, 'error');
    const listed = await waitFor(async () => {
      const items = (await ok('notification.deliveries', { notificationId: ch.notificationId })).items;
      return items[0]?.lastError ? items : undefined;
    }, { what: 'the failed attempt listed' });
    expect(listed[0]).toMatchObject({ status: 'pending', lastError: 'the sink answered 500', eventKind: 'appBuildError' });
    await waitFor(() => sink.at('/flaky').length === 1, { timeoutMs: 15_000, what: 'the message after the retries' });
    const attempts = sink.requests.filter((r) => r.path === '/flaky');
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((r) => r.idempotencyKey)).size).toBe(1);
    // Doubling delays from 300 ms: ≥ 300 ms, then ≥ 600 ms.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(280);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(580);
    const [row] = (await ok('notification.deliveries', { notificationId: ch.notificationId })).items;
    expect(row).toMatchObject({ status: 'delivered', attempts: 3, lastError: null });
  });

  it('a channel that does not answer does not hold back another, and its error holds no secret', async () => {
    const slow = await channel('/hangs', { appDeploy: true });
    await channel('/quick', { appDeploy: true });
    sink.hang('/hangs');
    const app = await containerApp('busy-app');
    const started = Date.now();
    await deployAndEnd(app.applicationId, 'done');
    await waitFor(() => sink.at('/quick').length === 1, { what: 'the quick channel' });
    expect(Date.now() - started).toBeLessThan(1200);
    expect(sink.requests.some((r) => r.path === '/hangs')).toBe(true);
    const [row] = await waitFor(async () => {
      const items = (await ok('notification.deliveries', { notificationId: slow.notificationId })).items;
      return items[0]?.lastError ? items : undefined;
    }, { what: 'the timeout recorded' });
    expect(row.lastError).toMatch(/no answer within 1500 ms/);
    expect(row.lastError).not.toContain(sink.url);
  });

  it('an unreachable channel: the error names no secret URL', async () => {
    const url = 'http://127.0.0.1:9/secret-path-x1';
    t.watch.secret(url);
    const ch = (await ok('notification.createHook', { ...NO_FLAGS, appDeploy: true, name: 'dead', webhookUrl: url, channel: '#x' })) as { notificationId: string };
    const app = await containerApp('dead-app');
    await deployAndEnd(app.applicationId, 'done');
    const [row] = await waitFor(async () => {
      const items = (await ok('notification.deliveries', { notificationId: ch.notificationId })).items;
      return items[0]?.lastError ? items : undefined;
    }, { what: 'the failure recorded' });
    expect(row.lastError).toContain('cannot reach the sink');
    expect(row.lastError).not.toContain('secret-path-x1');
  });

  it('notification.deliveries is for admins, of their organization', async () => {
    const member = await addMember(t, 'deliveries-member@test.local');
    expect((await t.as(member.key)('notification.deliveries', {})).status).toBe(403);
  });
});

describe('notification.receiveNotification', () => {
  const alert = { ServerType: 'Remote', Type: 'CPU', Value: 93.5, Threshold: 85, Message: 'CPU usage 93.5% is above the 85% threshold', Timestamp: '2026-12-01T12:00:00.000Z' };

  it('refuses a wrong token and stores nothing', async () => {
    await ok('user.getMetricsToken', {});
    const before = await t.db.selectFrom('events').select('id').execute();
    const r = await t.as(null)('notification.receiveNotification', { ...alert, Token: 'mtk_wrong' });
    expect(r.status).toBe(401);
    expect(await t.db.selectFrom('events').select('id').execute()).toEqual(before);
  });

  it("records a serverThreshold event of the token's organization, delivered to its subscribed channels", async () => {
    await channel('/thresholds', { serverThreshold: true });
    const { token } = await ok('user.getMetricsToken', {});
    t.watch.secret(token);
    expect((await t.as(null)('notification.receiveNotification', { ...alert, Token: token })).status).toBe(200);
    await waitFor(() => sink.at('/thresholds').length === 1, { what: 'the threshold message' });
    expect(sink.at('/thresholds')[0]!.body).toMatchObject({ kind: 'serverThreshold', outcome: 'failure', text: alert.Message });
    const event = await t.db.selectFrom('events').selectAll().where('kind', '=', 'serverThreshold').executeTakeFirstOrThrow();
    expect(event.organizationId).toBe(t.organizationId);
    expect(JSON.stringify(event.summary)).not.toContain(token);
  });
});

describe('GET /api/events', () => {
  const open = (key: string | null, headers: Record<string, string> = {}, query = '') =>
    t.platform.app.request(`http://skiff.test/api/events${query}`, { headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });

  it('streams events live, resumes after Last-Event-ID, never shows another organization', async () => {
    const other = await ok('organization.create', { name: 'Stream other' });
    const otherKey = t.watch.secret((await ok('user.createApiKey', { name: 'so', metadata: { organizationId: other.organizationId } })).key);
    const otherEnv = (await ok('project.create', { name: 'elsewhere' }, t.as(otherKey))).environments[0].environmentId;
    const otherApp = await containerApp('other-app', otherEnv, t.as(otherKey));

    const res = await open(t.ownerKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const live = new SseReader(res);
    await live.until((r) => r.comments.includes('connected'), 'the stream to open');
    const app = await containerApp('streamed');
    await deployAndEnd(app.applicationId, 'error');
    await deployAndEnd(otherApp.applicationId, 'done', t.as(otherKey));
    await deployAndEnd(app.applicationId, 'done');
    await live.until((r) => r.events.length >= 2, 'two events');
    await live.until((r) => r.comments.includes('heartbeat'), 'a heartbeat');
    expect(live.events.map((e) => e.event)).toEqual(['appBuildError', 'appDeploy']);
    expect(live.data().map((d) => d.workload.name)).toEqual(['streamed', 'streamed']);
    expect(live.data().every((d) => d.organizationId === t.organizationId)).toBe(true);
    expect(live.events[0]!.id).toBe(live.data()[0].eventId);
    await live.cancel();

    const resumed = new SseReader(await open(t.ownerKey, { 'last-event-id': live.events[0]!.id! }));
    await resumed.until((r) => r.events.length >= 1, 'the event after the resume point');
    await resumed.until((r) => r.comments.includes('heartbeat'), 'a heartbeat');
    expect(resumed.events.map((e) => e.id)).toEqual([live.events[1]!.id]);
    await resumed.cancel();

    const byQuery = new SseReader(await open(t.ownerKey, {}, `?lastEventId=${live.events[0]!.id}`));
    await byQuery.until((r) => r.events.length >= 1, 'the event after the resume point (query)');
    expect(byQuery.events[0]!.id).toBe(live.events[1]!.id);
    await byQuery.cancel();
  });

  it('a member sees only the events of the services they were given', async () => {
    const member = await addMember(t, 'stream-member@test.local');
    const seen = await containerApp('member-sees');
    const hidden = await containerApp('member-hidden');
    const project = await t.db.selectFrom('environments').select('projectId').where('id', '=', env).executeTakeFirstOrThrow();
    await ok('user.assignPermissions', { id: member.userId, accessedProjects: [project.projectId], accessedEnvironments: [env], accessedServices: [seen.applicationId] });
    const stream = new SseReader(await open(member.key));
    await stream.until((r) => r.comments.includes('connected'), 'the stream to open');
    await deployAndEnd(hidden.applicationId, 'done');
    await deployAndEnd(seen.applicationId, 'done');
    await ok('user.getMetricsToken', {}).then(({ token }) =>
      t.as(null)('notification.receiveNotification', { Type: 'Memory', Value: 95, Threshold: 90, Message: 'memory high', Timestamp: 'now', Token: token }),
    );
    await stream.until((r) => r.events.length >= 1, 'the visible event');
    await stream.until((r) => r.comments.filter((c) => c === 'heartbeat').length >= 2, 'two heartbeats');
    expect(stream.data().map((d) => d.workload?.name)).toEqual(['member-sees']);
    await stream.cancel();
  });

  it('refuses a missing key, a bad Last-Event-ID, too many streams, and ends when the key is removed', async () => {
    expect((await open(null)).status).toBe(401);
    const bad = await open(t.ownerKey, { 'last-event-id': 'abc' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { issues: { path: string[] }[] }).issues[0]!.path).toEqual(['Last-Event-ID']);

    const created = await ok('user.createApiKey', { name: 'short-lived' });
    const key = t.watch.secret(created.key as string);
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(new SseReader(await open(key)));
    const sixth = await open(key);
    expect(sixth.status).toBe(403);
    await Promise.all(streams.slice(1).map((s) => s.cancel()));
    const keyId = (await t.db.selectFrom('apiKeys').select('id').where('name', '=', 'short-lived').executeTakeFirstOrThrow()).id;
    await ok('user.deleteApiKey', { apiKeyId: keyId });
    await streams[0]!.until((r) => r.ended, 'the stream to end after the key was removed');
    expect(streams[0]!.comments).toContain('the API key was removed or expired');
  });
});
