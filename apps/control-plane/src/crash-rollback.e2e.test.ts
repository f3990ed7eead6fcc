// Crash loops and rollbacks, end to end (testing/stack.ts: API, NATS, gRPC reports, the
// agent process, the swarm): a version whose container exits 2 s after it started is seen
// by the agent, reported with its log lines, marks the application `error`, and with
// rollbackActive the previous version serves again. deployment.rollback puts an earlier
// built version back, and fails naming the image when a cleanup removed it.
import { tarGz, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrashLoopEvent } from './services/deployments/index.js';
import { removeBuiltImages } from './testing/built-images.js';
import { docker, freePort, page, startTestStack, webServerSettings, type TestStack } from './testing/stack.js';

let s: TestStack;
const crashLoops: CrashLoopEvent[] = [];
const images: string[] = [];
/** Applications whose built images go at the end (version two's too, untagged by the test while in use). */
const built: string[] = [];
beforeAll(async () => {
  s = await startTestStack('crash', { rollback: { onCrashLoop: async (event) => void crashLoops.push(event) } });
}, 120_000);
afterAll(async () => {
  // The stack's services go first: an image a container still uses would stay behind, untagged.
  try {
    await s?.close();
  } finally {
    await removeBuiltImages(built);
  }
  for (const repo of images) {
    const listed = await docker(['images', '--filter', `reference=${repo}`, '--format', '{{.Repository}}:{{.Tag}}']);
    for (const ref of listed.out.split('\n').filter(Boolean)) {
      // Swarm removes a removed service's task containers a moment later; they would keep the image, untagged.
      const users = (await docker(['ps', '--all', '--quiet', '--filter', `ancestor=${ref}`])).out.split('\n').filter(Boolean);
      if (users.length > 0) await docker(['rm', '--force', ...users]);
      await docker(['image', 'rm', '--force', ref]);
    }
  }
}, 90_000);

/** A local image of busybox whose command is `script` (removed by afterAll). */
async function imageRunning(tag: string, script: string): Promise<string> {
  const repo = `skiff-crash-${s.run}`;
  if (!images.includes(repo)) images.push(repo);
  const container = `skiff-crash-${s.run}-${tag}`;
  expect((await docker(['create', '--name', container, 'busybox:latest'])).ok).toBe(true);
  try {
    const committed = await docker(['commit', '--change', `CMD ${JSON.stringify(['sh', '-c', script])}`, container, `${repo}:${tag}`]);
    expect(committed.ok).toBe(true);
  } finally {
    await docker(['rm', '-f', container]);
  }
  return `${repo}:${tag}`;
}

const CRASHING = { command: 'sh', args: ['-c', 'echo crashing on purpose; echo the last words; sleep 2; exit 1'] };
/** A crashed task restarted after 1 s, not the engine's default 5 s: the crash loop's three exits come sooner. */
const QUICK_RESTARTS = { restartPolicyCluster: { Condition: 'any', Delay: 1_000_000_000 } };

type Listed = { deploymentId: string; status: string; title: string | null };
const deploymentsOf = async (applicationId: string) => (await s.t.call('deployment.all', { applicationId })).body as Listed[];
const statusOf = async (applicationId: string) => (await s.t.call('application.one', { applicationId })).body.applicationStatus as string;

async function ended(applicationId: string, deploymentId: string) {
  return waitFor(
    async () => {
      const mine = (await deploymentsOf(applicationId)).find((d) => d.deploymentId === deploymentId);
      return mine && ['done', 'error', 'cancelled'].includes(mine.status) ? mine : null;
    },
    { timeoutMs: 180_000, intervalMs: 250, what: () => `deployment ${deploymentId} to end (agent output: ${s.agentOutput().slice(-1500)})` },
  );
}

describe('crash loops', () => {
  it('marks the application error and reports the failing task\'s last log lines', async () => {
    const { t } = s;
    const port = await freePort();
    const app = await s.containerApplication('crashy', { containerImage: 'busybox:latest' });
    await t.call('application.update', { applicationId: app.applicationId, ...webServerSettings('steady', port), ...CRASHING, ...QUICK_RESTARTS });
    const deployed = await s.deployAndWait(app.applicationId);
    expect(deployed.status).toBe('done');

    const event = await waitFor(() => crashLoops.find((e) => e.applicationId === app.applicationId), {
      timeoutMs: 90_000,
      intervalMs: 500,
      what: () => `a crash loop of ${app.appName} (agent output: ${s.agentOutput().slice(-1500)})`,
    });
    expect(event).toMatchObject({ deploymentId: deployed.deploymentId, appName: app.appName, serverId: null, rollback: null });
    expect(event.exits).toBeGreaterThanOrEqual(3);
    expect(event.reason).toMatch(/failed.*exit.*1/);
    expect(event.logLines.slice(-2)).toEqual(['crashing on purpose', 'the last words']);
    expect(await statusOf(app.applicationId)).toBe('error');
  }, 240_000);

  it('with rollbackActive, puts the previous done deployment back, which serves again', async () => {
    const { t } = s;
    const port = await freePort();
    const goodImage = await imageRunning('good', 'mkdir -p /www && echo the good version > /www/index.html && exec httpd -f -p 8080 -h /www');
    const badImage = await imageRunning('bad', 'echo crashing on purpose; echo the last words; sleep 2; exit 1');
    const app = await s.containerApplication('rollsback', { containerImage: goodImage });
    await t.call('application.update', {
      applicationId: app.applicationId,
      rollbackActive: true,
      ...QUICK_RESTARTS,
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
    });
    const good = await s.deployAndWait(app.applicationId);
    expect(good.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'the good version', { timeoutMs: 30_000, what: 'the good version' });

    await t.call('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: badImage, username: null, password: null, registryUrl: null });
    const bad = await s.deployAndWait(app.applicationId, 'application.redeploy');
    expect(bad.status).toBe('done');

    const event = await waitFor(() => crashLoops.find((e) => e.applicationId === app.applicationId), { timeoutMs: 90_000, intervalMs: 500, what: 'the crash loop' });
    expect(event.deploymentId).toBe(bad.deploymentId);
    expect(event.rollback).toEqual({ deploymentId: expect.any(String) });
    const rollbackId = (event.rollback as { deploymentId: string }).deploymentId;
    const rollback = await ended(app.applicationId, rollbackId);
    expect(rollback).toMatchObject({ status: 'done', title: 'Rollback' });
    const log = (await t.call('deployment.readLogs', { deploymentId: rollbackId })).body as { log: string };
    expect(log.log).toContain(`Deploying image ${goodImage}`);
    await waitFor(async () => (await page(port)) === 'the good version', { timeoutMs: 30_000, what: 'the good version again' });
    expect((await deploymentsOf(app.applicationId)).map((d) => d.deploymentId)).toEqual([rollbackId, bad.deploymentId, good.deploymentId]);
    expect(await statusOf(app.applicationId)).toBe('done');
  }, 300_000);
});

describe('deployment.rollback', () => {
  const site = (text: string) =>
    tarGz([
      { name: 'Containerfile', content: 'FROM busybox:latest\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n' },
      { name: 'index.html', content: `${text}\n` },
    ]);

  async function drop(applicationId: string, text: string) {
    const form = new FormData();
    form.set('applicationId', applicationId);
    form.set('archive', new Blob([new Uint8Array(await site(text))]), 'site');
    const res = await s.t.platform.app.request('http://skiff.test/api/application.dropDeployment', { method: 'POST', headers: { 'x-api-key': s.t.ownerKey }, body: form });
    const body = (await res.json()) as { deploymentId: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    return ended(applicationId, body.deploymentId);
  }

  it('puts an earlier built version back without building, and fails naming the image once it is gone', async () => {
    const { t } = s;
    const port = await freePort();
    const created = await t.call('application.create', { name: 'rb', appName: `rb-${s.run}`, environmentId: s.environmentId, sourceType: 'drop' });
    const app = created.body as { applicationId: string; appName: string };
    s.services.push(app.appName);
    built.push(app.applicationId);
    await t.call('application.saveBuildType', { applicationId: app.applicationId, buildType: 'containerfile', containerfile: 'Containerfile', containerContextPath: null, containerBuildStage: null, legacyVersion: null, packTwoVersion: null });
    await t.call('application.update', {
      applicationId: app.applicationId,
      rollbackActive: true,
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
    });
    const v1 = await drop(app.applicationId, 'version one');
    const v2 = await drop(app.applicationId, 'version two');
    const v3 = await drop(app.applicationId, 'version three');
    for (const v of [v1, v2, v3]) expect(v.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'version three', { timeoutMs: 30_000, what: 'version three' });

    const queued = await t.call('deployment.rollback', { deploymentId: v1.deploymentId });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const back = await ended(app.applicationId, queued.body.deploymentId);
    expect(back).toMatchObject({ status: 'done', title: 'Rollback' });
    await waitFor(async () => (await page(port)) === 'version one', { timeoutMs: 30_000, what: 'version one again' });
    const log = (await t.call('deployment.readLogs', { deploymentId: back.deploymentId })).body as { log: string };
    expect(log.log).toContain('no build, no pull');
    expect(log.log).not.toMatch(/Building image/);

    // A cleanup removed version two's image: the rollback ends in error at once, naming it.
    const v2Image = `${app.appName}:${v2.deploymentId}`;
    expect((await docker(['image', 'rm', '--force', v2Image])).ok).toBe(true);
    const gone = await t.call('deployment.rollback', { deploymentId: v2.deploymentId });
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    const failed = await ended(app.applicationId, gone.body.deploymentId);
    expect(failed.status).toBe('error');
    const reason = ((await t.call('deployment.readLogs', { deploymentId: failed.deploymentId })).body as { reason: string }).reason;
    expect(reason).toBe(`the image ${v2Image} is no longer on this server (removed by a cleanup or prune): it cannot be rolled back to`);
    expect(await page(port)).toBe('version one');

    // Refused before anything is queued: a deployment that is not done.
    const refused = await t.call('deployment.rollback', { deploymentId: failed.deploymentId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toEqual([{ path: ['deploymentId'], message: 'only a done deployment can be rolled back to (this one is error)' }]);
  }, 400_000);
});
