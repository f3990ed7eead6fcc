// The metrics store and its operations against real Postgres, fed through the real gRPC
// report server as the platform host's agent feeds it: organization scoping, the platform
// host for platform administrators only, bounds, retention, cleaning, and one threshold
// event per crossing.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Metadata, credentials } from '@grpc/grpc-js';
import { AgentReportsClient, type ContainerSample, type HostSample, type MetricsBatch, timestampFromDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Call, addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const credential = randomBytes(32).toString('base64url');
const events: unknown[][] = [];
let t: TestPlatform;
let client: AgentReportsClient;
/** Admin of another organization, without platform administration. */
let tenant: Call;
let tenantEnv: string;
let tenantServer: string;

const host = (at: Date, overrides: Partial<HostSample> = {}): HostSample => ({
  at: timestampFromDate(at),
  cpuPercent: 10,
  memoryUsedBytes: 400,
  memoryTotalBytes: 1000,
  diskUsedBytes: 5,
  diskTotalBytes: 10,
  networkRxBytesPerSecond: 1,
  networkTxBytesPerSecond: 2,
  ...overrides,
});
const container = (at: Date, containerName: string, appName: string, overrides: Partial<ContainerSample> = {}): ContainerSample => ({
  at: timestampFromDate(at),
  containerName,
  appName,
  workloadId: '',
  cpuPercent: 5,
  memoryUsedBytes: 100,
  memoryLimitBytes: 1000,
  networkRxBytesPerSecond: 0,
  networkTxBytesPerSecond: 0,
  ...overrides,
});

function send(batch: Partial<MetricsBatch>): Promise<void> {
  const m = new Metadata();
  m.set('authorization', `Bearer ${credential}`);
  return new Promise((resolve, reject) =>
    client.reportMetrics({ hosts: [], containers: [], ...batch }, m, (err) => (err ? reject(err) : resolve())),
  );
}

const ago = (ms: number) => new Date(Date.now() - ms);

beforeAll(async () => {
  t = await startTestPlatform({
    grpc: { host: '127.0.0.1', port: 0 },
    localAgentCredential: credential,
    metrics: {
      maxContainers: 3,
      thresholdDurationMs: 0,
      onThreshold: async (...args) => void events.push(args),
    },
  });
  client = new AgentReportsClient(`127.0.0.1:${t.platform.grpcPort}`, credentials.createInsecure());
  const joined = await addMember(t, 'metrics-tenant@example.com', 'admin');
  const org = await t.as(joined.key)('organization.create', { name: 'Metrics tenant' });
  const key = await t.as(joined.key)('user.createApiKey', { name: 'k', metadata: { organizationId: org.body.organizationId } });
  tenant = t.as(key.body.key);
  tenantEnv = (await tenant('project.create', { name: 'tenant' })).body.environments[0].environmentId;
  const server = await tenant('server.create', { name: 'tenant-1', address: '203.0.113.20' });
  expect(server.status, JSON.stringify(server.body)).toBe(200);
  tenantServer = server.body.serverId;
});
afterAll(async () => {
  client?.close();
  await t?.close();
});

describe('user.getServerMetrics', () => {
  it("answers the platform host's samples from the store, newest dataPoints, to a platform administrator only", async () => {
    await send({ hosts: [host(ago(30_000), { cpuPercent: 11 }), host(ago(20_000), { cpuPercent: 12 }), host(ago(10_000), { cpuPercent: 13 })] });
    const all = await t.call('user.getServerMetrics', {});
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body).toMatchObject({ serverId: 'local', resolution: 'full', thresholds: { cpuPercent: null, memoryPercent: null } });
    expect(all.body.points.map((p: { cpuPercent: number }) => p.cpuPercent)).toEqual([11, 12, 13]);
    expect(all.body.points[0]).toMatchObject({ memoryPercent: 40, diskUsedBytes: 5, networkTxBytesPerSecond: 2 });
    const two = await t.call('user.getServerMetrics', { dataPoints: '2' });
    expect(two.body.points.map((p: { cpuPercent: number }) => p.cpuPercent)).toEqual([12, 13]);

    const refused = await tenant('user.getServerMetrics', {});
    expect(refused.status).toBe(403);
    const bad = await t.call('user.getServerMetrics', { dataPoints: 'lots' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toEqual(['dataPoints']);
  });

  it("a remote server's metrics to its own organization, and to no other", async () => {
    await t.platform.metrics.record(tenantServer, { hosts: [host(ago(5_000), { cpuPercent: 42 })], containers: [] });
    const own = await tenant('user.getServerMetrics', { serverId: tenantServer });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.points.map((p: { cpuPercent: number }) => p.cpuPercent)).toEqual([42]);
    // The platform administrator of another organization does not see it either.
    const other = await t.call('user.getServerMetrics', { serverId: tenantServer });
    expect(other.status).toBe(404);
    expect(other.body.message).toBe('No such server');
  });
});

describe('user.getContainerMetrics', () => {
  it("shows only the caller's own workloads' containers, and never fetches the url it is given", async () => {
    const mine = await tenant('application.create', { name: 'metrics web', appName: `tw-${randomBytes(2).toString('hex')}`, environmentId: tenantEnv });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    const appName = mine.body.appName as string;
    const ownerEnv = (await t.call('project.create', { name: 'owner metrics' })).body.environments[0].environmentId;
    const theirs = (await t.call('application.create', { name: 'owner web', environmentId: ownerEnv })).body.appName as string;
    const at = ago(8_000);
    await send({ containers: [container(at, `${appName}.1.x`, appName, { cpuPercent: 7 }), container(at, `${theirs}.1.y`, theirs)] });

    let hits = 0;
    const trap = createServer((_req, res) => {
      hits++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(trap.address() as { port: number }).port}/metrics`;
    try {
      const got = await tenant('user.getContainerMetrics', { appName, url, token: 'x', dataPoints: '10' });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.containers).toHaveLength(1);
      expect(got.body.containers[0]).toMatchObject({ serverId: 'local', containerName: `${appName}.1.x`, workloadId: mine.body.applicationId });
      expect(got.body.containers[0].points[0]).toMatchObject({ cpuPercent: 7, memoryUsedBytes: 100 });
      expect(hits).toBe(0);
    } finally {
      trap.close();
    }
    // Another organization's app name is as unknown as no app at all.
    const foreign = await tenant('user.getContainerMetrics', { appName: theirs });
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toBe((await tenant('user.getContainerMetrics', { appName: 'nothing-here' })).body.message);
    const missing = await tenant('user.getContainerMetrics', {});
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].path).toEqual(['appName']);
  });
});

describe('the store', () => {
  it('keeps at most maxContainers per server and instant, and nothing from outside the day', async () => {
    const at = ago(3_000);
    const server = (await tenant('server.create', { name: 'bounds', address: '203.0.113.21' })).body.serverId as string;
    await t.platform.metrics.record(server, {
      hosts: [host(ago(2 * 24 * 3600_000))],
      containers: ['e', 'd', 'c', 'b', 'a'].map((n) => container(at, n, 'bounded')),
    });
    const rows = await t.db.selectFrom('containerMetrics').select('containerName').where('serverId', '=', server).orderBy('containerName').execute();
    expect(rows.map((r) => r.containerName)).toEqual(['a', 'b', 'c']);
    expect(await t.db.selectFrom('hostMetrics').select('at').where('serverId', '=', server).execute()).toEqual([]);
  });

  it('downsamples to 5-minute averages and maxima and deletes what aged out', async () => {
    const server = (await tenant('server.create', { name: 'retention', address: '203.0.113.22' })).body.serverId as string;
    const bucket = new Date(Math.floor((Date.now() - 3600_000) / 300_000) * 300_000);
    await t.platform.metrics.record(server, {
      hosts: [host(new Date(bucket.getTime() + 10_000), { cpuPercent: 10 }), host(new Date(bucket.getTime() + 20_000), { cpuPercent: 30 })],
      containers: [],
    });
    // Rows the retention must delete: full resolution older than a day, buckets older than 30 days.
    const row = { serverId: server, memoryUsed: 1, memoryMax: 1, memoryTotal: 2, diskUsed: 1, diskTotal: 2, networkRx: 0, networkTx: 0, cpuPercent: 1, cpuMax: 1 };
    await t.db.insertInto('hostMetrics').values([
      { ...row, resolution: 0, at: ago(25 * 3600_000) },
      { ...row, resolution: 300, at: ago(31 * 24 * 3600_000) },
    ]).execute();
    await t.platform.metrics.retain();
    const rows = await t.db.selectFrom('hostMetrics').selectAll().where('serverId', '=', server).orderBy('resolution').orderBy('at').execute();
    expect(rows.map((r) => [r.resolution, r.at.toISOString(), r.cpuPercent, r.cpuMax])).toEqual([
      [0, new Date(bucket.getTime() + 10_000).toISOString(), 10, 10],
      [0, new Date(bucket.getTime() + 20_000).toISOString(), 30, 30],
      [300, bucket.toISOString(), 20, 30],
    ]);
    const coarse = await tenant('user.getServerMetrics', { serverId: server, resolution: '5m' });
    expect(coarse.body.points).toEqual([expect.objectContaining({ at: bucket.toISOString(), cpuPercent: 20, cpuMaxPercent: 30 })]);
  });
});

describe('settings.cleanMonitoring', () => {
  it("empties one server's metrics: the platform host's for a platform administrator, a remote one's for its organization's admins", async () => {
    await send({ hosts: [host(ago(1_000))] });
    const count = async (serverId: string) =>
      Number((await t.db.selectFrom('hostMetrics').select((eb) => eb.fn.countAll().as('n')).where('serverId', '=', serverId).executeTakeFirstOrThrow()).n);
    expect(await count('local')).toBeGreaterThan(0);
    expect(await count(tenantServer)).toBeGreaterThan(0);

    expect((await tenant('settings.cleanMonitoring', {})).status).toBe(403);
    expect((await t.call('settings.cleanMonitoring', { serverId: tenantServer })).status).toBe(404);
    expect(await count('local')).toBeGreaterThan(0);
    expect(await count(tenantServer)).toBeGreaterThan(0);

    expect((await tenant('settings.cleanMonitoring', { serverId: tenantServer })).status).toBe(200);
    expect(await count(tenantServer)).toBe(0);
    expect((await t.call('settings.cleanMonitoring', {})).status).toBe(200);
    expect(await count('local')).toBe(0);
  });
});

describe('thresholds', () => {
  it('one crossed event for a value that stays above, one recovered when it goes back under', async () => {
    expect((await tenant('settings.updateMetricsThresholds', { cpuPercent: 50 })).status).toBe(403);
    const set = await t.call('settings.updateMetricsThresholds', { cpuPercent: 50 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({ serverId: 'local', cpuPercent: 50, memoryPercent: null });
    events.length = 0;
    for (const [i, cpu] of [60, 70, 80, 90].entries()) await send({ hosts: [host(ago(40_000 - i * 1000), { cpuPercent: cpu })] });
    expect(events).toEqual([['local', 'cpu', 60, 50, 'crossed']]);
    for (const [i, cpu] of [48, 20, 10].entries()) await send({ hosts: [host(ago(30_000 - i * 1000), { cpuPercent: cpu })] });
    expect(events).toEqual([['local', 'cpu', 60, 50, 'crossed'], ['local', 'cpu', 20, 50, 'recovered']]);
    expect((await t.call('user.getServerMetrics', {})).body.thresholds).toEqual({ cpuPercent: 50, memoryPercent: null });
    const bad = await t.call('settings.updateMetricsThresholds', { memoryPercent: 101 });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toEqual(['memoryPercent']);
  });
});
