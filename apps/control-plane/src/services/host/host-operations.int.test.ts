/**
 * Operations on whole hosts against real Postgres: who may clean, restart and update (the
 * platform host needs a platform administrator, a server an admin of its organization, a
 * server of another organization does not exist); what a cleanup asks of the agent and
 * reports (answered here by a recording agent control speaking the real proto: the agent side
 * runs against the real engine in apps/agent/src/control/host-cleanup.int.test.ts); the daily
 * schedule claimed once by two control planes; the release feed served by a test HTTP server;
 * reloadServer leaving queued commands queued across the restart.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, type ServiceError, credentials as grpcCredentials, status } from '@grpc/grpc-js';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { CONTROL_REQUEST_MAX_AGE_MS, CommandVerifier, controlSubject } from '@skiff/domain';
import { freshDatabase, startDedicatedNats } from '@skiff/testing';
import { AgentArtifactsClient, ControlReply, ControlRequest } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AgentControl } from '../../agents/outbound/control-client.js';
import { buildPlatform } from '../../compose-root.js';
import { DailyCleanupJob } from '../../jobs/daily-cleanup.js';
import { type Answer, addMember, apiClient, type TestPlatform, startTestPlatform } from '../../testing/harness.js';
import { CleanupSchedules } from './cleanup-schedules.js';
import { type CleanupResult, HostCleanupService } from './host-cleanup.js';

const log = pino({ level: 'silent' });
let t: TestPlatform;
let feed: Server;
let feedBody = '';
let feedUrl = '';
let restarts = 0;
let serverId: string;
let orgAdmin: string;
let outsider: string;

beforeAll(async () => {
  feed = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(feedBody);
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/feed.json`;
  t = await startTestPlatform({ host: { releaseFeedUrl: feedUrl, restart: () => void restarts++ } });
  serverId = (await t.call('server.create', { name: 'edge', address: '203.0.113.40' })).body.serverId;
  orgAdmin = (await addMember(t, 'org-admin@example.com', 'admin')).key;
  // An admin of another organization (not a platform administrator).
  const other = await t.call('organization.create', { name: 'Other' });
  const ownerThere = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
  t.watch.secret(ownerThere);
  outsider = (await addMember(t, 'outsider@example.com', 'admin', ownerThere)).key;
}, 60_000);

/** Folders of agent programs the tests offer, removed at the end. */
const bundleDirs: string[] = [];
const bundleDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bundle-'));
  bundleDirs.push(dir);
  return dir;
};

afterAll(async () => {
  await t?.close();
  feed?.close();
  for (const dir of bundleDirs) rmSync(dir, { recursive: true, force: true });
});

const CLEANUPS = ['cleanUnusedImages', 'cleanStoppedContainers', 'cleanContainerBuilder', 'cleanContainerPrune', 'cleanUnusedVolumes', 'cleanAll'];
const agentAsked = (body: { message: string }, server: string) =>
  expect(body.message).toBe(`The agent of ${server} did not answer (the control plane runs without NATS); nothing was changed on it`);

describe('who may act on a whole host', () => {
  it('refuses an admin of another organization on a server it does not own (NOT_FOUND, as an unknown id)', async () => {
    for (const op of CLEANUPS) {
      const res = await t.as(outsider)(`settings.${op}`, { serverId });
      expect(res.status, op).toBe(404);
      expect(res.body.message).toBe('No such server');
    }
    const schedule = await t.as(outsider)('settings.updateContainerCleanup', { enableContainerCleanup: true, serverId });
    expect(schedule.status).toBe(404);
    expect(await t.db.selectFrom('cleanupSchedules').selectAll().where('serverId', '=', serverId).execute()).toEqual([]);
  });

  it('refuses organization admins on the platform host: FORBIDDEN for every whole-host operation', async () => {
    for (const key of [orgAdmin, outsider]) {
      for (const op of [...CLEANUPS, 'cleanMonitoring', 'reloadServer', 'updateServer', 'getUpdateData']) {
        const res = await t.as(key)(`settings.${op}`, {});
        expect(res.status, op).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
      expect((await t.as(key)('settings.cleanAll', { serverId: 'local' })).status).toBe(403);
    }
    expect(restarts).toBe(0);
  });

  it("lets an organization's admin clean its own server, and the platform admin the platform host", async () => {
    const own = await t.as(orgAdmin)('settings.cleanAll', { serverId });
    expect(own.status).toBe(400);
    agentAsked(own.body, `server ${serverId}`);
    const host = await t.call('settings.cleanUnusedVolumes', {});
    expect(host.status).toBe(400);
    agentAsked(host.body, 'server local (the platform host)');
  });
});

/** An agent control that records each request and answers a HostCleanupReply. */
function recordingAgent(reply: Partial<ControlReply> = {}) {
  const requests: Array<{ serverId: string; request: ControlRequest }> = [];
  const agents: AgentControl = {
    request: async (serverId, request) => {
      requests.push({ serverId, request });
      return {
        commandIds: [],
        error: '',
        hostCleanup: { removedContainers: ['old'], removedImages: ['sha256:1'], removedVolumes: [], spaceFreed: '4096', waitedMs: 12 },
        ...reply,
      };
    },
  };
  return { agents, requests };
}

describe('a cleanup', () => {
  it("sends the server's workload names and what to remove, reports the result to onCleanup", async () => {
    const project = (await t.call('project.create', { name: 'cleanup' })).body;
    const env = project.environments[0].environmentId;
    const app = (await t.call('application.create', { name: 'web', environmentId: env, serverId })).body;
    const local = (await t.call('application.create', { name: 'home', environmentId: env })).body;
    const stack = (await t.call('compose.create', { name: 'stack', environmentId: env, serverId })).body;
    const { agents, requests } = recordingAgent();
    const events: Array<[string, CleanupResult, string]> = [];
    const service = new HostCleanupService(
      { db: t.db, ids: () => 'x', clock: () => new Date(), secrets: t.platform.secrets, onAccessChange: () => {} },
      { agents, log, onCleanup: async (id, result, trigger) => void events.push([id, result, trigger]) },
    );
    const result = await service.run(serverId, 'cleanUnusedVolumes');
    expect(result).toEqual({ serverId, removedContainers: ['old'], removedImages: ['sha256:1'], removedVolumes: [], spaceFreed: 4096, waitedMs: 12 });
    expect(events).toEqual([[serverId, result, 'cleanUnusedVolumes']]);
    const sent = requests[0]!;
    expect(sent.serverId).toBe(serverId);
    expect(sent.request.request?.$case).toBe('hostCleanup');
    const cleanup = sent.request.request?.$case === 'hostCleanup' ? sent.request.request.value : null;
    expect(cleanup).toMatchObject({ volumes: true, images: false, stoppedContainers: false, buildCache: false });
    expect(cleanup!.keepAppNames).toEqual([app.appName, stack.appName].sort());
    expect(cleanup!.keepAppNames).not.toContain(local.appName);

    await service.run('local', 'cleanAll', 'daily');
    const all = requests[1]!.request.request;
    expect(all?.$case === 'hostCleanup' && all.value).toMatchObject({ images: true, stoppedContainers: true, buildCache: true, volumes: false, keepAppNames: [local.appName] });
    expect(events[1]![2]).toBe('daily');
  });

  it("answers the agent's refusal as a BAD_REQUEST and emits no event", async () => {
    const { agents } = recordingAgent({ error: 'nothing was cleaned: 1 build or deploy command(s) still ran after 600 s', hostCleanup: undefined });
    const events: unknown[] = [];
    const service = new HostCleanupService(
      { db: t.db, ids: () => 'x', clock: () => new Date(), secrets: t.platform.secrets, onAccessChange: () => {} },
      { agents, log, onCleanup: async (...args) => void events.push(args) },
    );
    await expect(service.run(serverId, 'cleanAll')).rejects.toThrow(`The agent of server ${serverId} did not clean: nothing was cleaned: 1 build or deploy command(s) still ran after 600 s`);
    expect(events).toEqual([]);
  });
});

const unusedHostSettings = {
  updateContainerCleanup: async (): Promise<never> => {
    throw new Error('not used by the schedule claims');
  },
};

describe('the daily cleanup', () => {
  it('is switched per server by who may clean it', async () => {
    const host = await t.call('settings.updateContainerCleanup', { enableContainerCleanup: true });
    expect(host.status).toBe(200);
    expect(host.body.enableContainerCleanup).toBe(true);
    const server = await t.as(orgAdmin)('settings.updateContainerCleanup', { enableContainerCleanup: true, serverId });
    expect(server.body).toEqual({ serverId, enableContainerCleanup: true });
    const rows = await t.db.selectFrom('cleanupSchedules').select(['serverId', 'enabled']).orderBy('serverId').execute();
    expect(rows).toEqual([{ serverId: 'local', enabled: true }, { serverId, enabled: true }].sort((a, b) => a.serverId.localeCompare(b.serverId)));
  });

  it('runs each enabled server once a day, even with two control planes ticking at once', async () => {
    let now = new Date('2030-01-01T03:00:00Z');
    const deps = { db: t.db, ids: () => 'x', clock: () => now, secrets: t.platform.secrets, onAccessChange: () => {} };
    const ran: string[] = [];
    const runner = { run: async (id: string) => (ran.push(id), {} as CleanupResult) };
    const planeA = new DailyCleanupJob(new CleanupSchedules(deps, unusedHostSettings), runner, log);
    const planeB = new DailyCleanupJob(new CleanupSchedules(deps, unusedHostSettings), runner, log);
    const [a, b] = await Promise.all([planeA.tick(), planeB.tick()]);
    expect([...a, ...b].sort()).toEqual(['local', serverId].sort());
    expect(ran.sort()).toEqual(['local', serverId].sort());
    // Not due again within the day.
    now = new Date('2030-01-02T02:59:00Z');
    expect([...(await planeA.tick()), ...(await planeB.tick())]).toEqual([]);
    now = new Date('2030-01-02T03:00:00Z');
    const [a2, b2] = await Promise.all([planeA.tick(), planeB.tick()]);
    expect([...a2, ...b2].sort()).toEqual(['local', serverId].sort());
    expect(ran).toHaveLength(4);
    // Switched off: never due.
    await t.as(orgAdmin)('settings.updateContainerCleanup', { enableContainerCleanup: false, serverId });
    now = new Date('2030-01-05T03:00:00Z');
    expect(await planeA.tick()).toEqual(['local']);
  });
});

describe('updates', () => {
  it('compares the running version with the newest release of the feed', async () => {
    feedBody = JSON.stringify({ releases: [{ version: '0.0.9' }, { version: '0.1.2', url: 'https://example.com/r/0.1.2', notes: 'faster' }, { version: '0.1.10-rc.1' }] });
    const res = await t.call('settings.getUpdateData', {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      currentVersion: '0.0.0-test',
      latestVersion: '0.1.10-rc.1',
      updateAvailable: true,
      releaseUrl: null,
      notes: null,
      feedUrl,
    });
    feedBody = JSON.stringify({ latest: { version: '0.0.0-test' } });
    expect((await t.call('settings.getUpdateData', {})).body.updateAvailable).toBe(false);
  });

  it('answers a clear BAD_REQUEST when the feed is not a feed or cannot be reached', async () => {
    feedBody = '<html>maintenance</html>';
    const bad = await t.call('settings.getUpdateData', {});
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe(`The release feed ${feedUrl} could not be read: its answer is not JSON`);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const away = await startTestPlatform({ host: { releaseFeedUrl: `http://127.0.0.1:${port}/feed.json` } });
    try {
      const res = await away.call('settings.getUpdateData', {});
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^The release feed http://127.0.0.1:${port}/feed.json could not be read: .*refused`));
    } finally {
      await away.close();
    }
  });

  it('updateServer asks every agent in turn and says how the control plane is updated', async () => {
    const res = await t.call('settings.updateServer', {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.version).toBe('0.0.0-test');
    // Without NATS no agent can be asked; the server that never joined is not listed.
    expect(res.body.agents).toEqual([{ serverId: 'local', status: 'unreachable', detail: expect.stringContaining('did not answer') }]);
    expect(res.body.controlPlane).toMatch(/settings\.reloadServer/);
  });
});

describe('platformRestart', () => {
  it('is reported at every start but the first', async () => {
    const starts: Array<{ version: string }> = [];
    const p = await startTestPlatform({ host: { onPlatformRestart: async (info) => void starts.push(info) } });
    try {
      await p.platform.hostOps.started(true);
      expect(starts).toEqual([]);
      await p.platform.hostOps.started(false);
      expect(starts).toEqual([{ version: '0.0.0-test' }]);
    } finally {
      await p.close();
    }
  });
});

describe('reloadServer', () => {
  it('answers, then restarts; commands queued before stay queued for the next start', async () => {
    const fresh = await freshDatabase(inject('postgresUrl'));
    const secretKey = randomBytes(32);
    let restarted: Promise<void> | null = null;
    const options = { database: { url: fresh.url }, secretKey, log, version: '0.0.0-test', host: { dailyCleanupTickMs: false as const } };
    const first = await buildPlatform({ ...options, host: { ...options.host, restart: () => void (restarted = first.close()) } });
    try {
      const boot = (await first.identity.bootstrap({ email: 'o@test.local', name: 'O' }))!;
      const call = apiClient(first.app, boot.key, () => 'POST');
      const ok = async (op: string, input: Record<string, unknown>) => {
        const res: Answer = await call(op, input);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body;
      };
      const project = await ok('project.create', { name: 'queued' });
      const app = await ok('application.create', { name: 'web', environmentId: project.environments[0].environmentId });
      await ok('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
      const deployed = await ok('application.deploy', { applicationId: app.applicationId });
      expect(await ok('settings.reloadServer', {})).toEqual({});
      await expect.poll(() => restarted !== null).toBe(true);
      await restarted;
      const second = await buildPlatform(options);
      try {
        const command = await second.database.db.selectFrom('commands').select(['status', 'deploymentId']).executeTakeFirstOrThrow();
        expect(command).toEqual({ status: 'pending', deploymentId: deployed.deploymentId });
        const deployment = await second.database.db.selectFrom('deployments').select('status').where('id', '=', deployed.deploymentId).executeTakeFirstOrThrow();
        expect(deployment.status).toBe('queued');
      } finally {
        await second.close();
      }
    } finally {
      if (!restarted) await first.close();
      await fresh.drop();
    }
  }, 60_000);

  it('is refused where no supervisor would start the control plane again', async () => {
    const bare = await startTestPlatform();
    try {
      const res = await bare.call('settings.reloadServer', {});
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/without a supervisor/);
    } finally {
      await bare.close();
    }
  });
});

describe('through the agent channel (NATS), answered in the agent\'s wire format', () => {
  it('cleanAll reaches the agent signed, answers its result and emits the containerCleanup data; updateServer waits for the agent to come back', async () => {
    const nats = await startDedicatedNats();
    const events: Array<[string, CleanupResult, string]> = [];
    const bundle = join(bundleDir(), 'main.mjs');
    writeFileSync(bundle, 'console.log("agent 0.0.0-test")\n');
    const p = await startTestPlatform({
      nats: { url: nats.url, pollMs: 100 },
      host: {
        onCleanup: async (id, result, trigger) => void events.push([id, result, trigger]),
        agentUpdates: { agentPollMs: 50, agentReturnTimeoutMs: 5_000 },
        agentBundlePath: bundle,
      },
    });
    const nc = await connect({ servers: nats.url });
    try {
      const verifier = CommandVerifier.fromText(p.platform.commandKey);
      const seen: ControlRequest[] = [];
      let version = '0.0.0-old';
      nc.subscribe(controlSubject('local'), {
        callback: (_err, msg) => {
          const refused = verifier.check(controlSubject('local'), msg.data, (name) => msg.headers?.get(name), { maxAgeMs: CONTROL_REQUEST_MAX_AGE_MS });
          if (refused !== null) {
            msg.respond(ControlReply.encode({ commandIds: [], error: `the agent refused the request: ${refused}` }).finish());
            return;
          }
          const request = ControlRequest.decode(msg.data);
          seen.push(request);
          let reply: ControlReply = { commandIds: [], error: 'unexpected' };
          if (request.request?.$case === 'hostCleanup') {
            reply = { commandIds: [], error: '', hostCleanup: { removedContainers: ['stray'], removedImages: [], removedVolumes: [], spaceFreed: '123', waitedMs: 0 } };
          } else if (request.request?.$case === 'agentRestart') {
            const { checkOnly, version: wanted } = request.request.value;
            const restarting = !checkOnly && wanted !== version;
            reply = { commandIds: [], error: '', agentRestart: { version, restarting } };
            // The restarted agent runs the new program.
            if (restarting) version = wanted;
          }
          msg.respond(ControlReply.encode(reply).finish());
        },
      });
      await nc.flush();
      const res = await p.call('settings.cleanAll', {});
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const expected = { serverId: 'local', removedContainers: ['stray'], removedImages: [], removedVolumes: [], spaceFreed: 123, waitedMs: 0 };
      expect(res.body).toEqual(expected);
      expect(events).toEqual([['local', expected, 'cleanAll']]);
      expect(seen[0]?.request).toMatchObject({ $case: 'hostCleanup', value: { images: true, stoppedContainers: true, buildCache: true, volumes: false } });

      const updated = await p.call('settings.updateServer', {});
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      expect(updated.body.agents).toEqual([{ serverId: 'local', status: 'updated', detail: 'runs 0.0.0-test' }]);
      const restart = seen.find((r) => r.request?.$case === 'agentRestart' && !r.request.value.checkOnly)?.request;
      const digest = createHash('sha256').update('console.log("agent 0.0.0-test")\n').digest('hex');
      expect(restart).toEqual({ $case: 'agentRestart', value: { version: '0.0.0-test', checkOnly: false, bundleSha256: digest, bundleSize: '32' } });
      const again = await p.call('settings.updateServer', {});
      expect(again.body.agents).toEqual([{ serverId: 'local', status: 'current', detail: 'runs 0.0.0-test' }]);
    } finally {
      await nc.close();
      await p.close();
      await nats.stop();
    }
  }, 60_000);
});

describe('AgentArtifacts.FetchAgentBundle', () => {
  it('streams the offered agent program to a joined agent, only by its current SHA-256', async () => {
    const dir = bundleDir();
    const bundle = join(dir, 'main.mjs');
    const program = randomBytes(150 * 1024);
    writeFileSync(bundle, program);
    const credential = randomBytes(24).toString('base64url');
    const p = await startTestPlatform({ grpc: { host: '127.0.0.1', port: 0 }, localAgentCredential: credential, host: { agentBundlePath: bundle } });
    const client = new AgentArtifactsClient(`127.0.0.1:${p.platform.grpcPort}`, grpcCredentials.createInsecure());
    const fetch = (sha256: string, cred: string) =>
      new Promise<Buffer>((resolve, reject) => {
        const metadata = new Metadata();
        metadata.set('authorization', `Bearer ${cred}`);
        const call = client.fetchAgentBundle({ sha256 }, metadata, { deadline: new Date(Date.now() + 10_000) });
        const chunks: Buffer[] = [];
        call.on('data', (c: { data: Buffer }) => chunks.push(Buffer.from(c.data)));
        call.on('error', reject);
        call.on('end', () => resolve(Buffer.concat(chunks)));
      });
    const codeOf = (promise: Promise<unknown>) => promise.then(() => 'OK', (e: ServiceError) => status[e.code]);
    try {
      const digest = createHash('sha256').update(program).digest('hex');
      expect((await fetch(digest, credential)).equals(program)).toBe(true);
      expect(await codeOf(fetch('0'.repeat(64), credential))).toBe('NOT_FOUND');
      expect(await codeOf(fetch(digest, 'not-a-credential'))).toBe('UNAUTHENTICATED');
      // A program built since is the one offered: the old digest is gone.
      writeFileSync(bundle, Buffer.concat([program, Buffer.from('x')]));
      expect(await codeOf(fetch(digest, credential))).toBe('NOT_FOUND');
    } finally {
      client.close();
      await p.close();
    }
  });
});
