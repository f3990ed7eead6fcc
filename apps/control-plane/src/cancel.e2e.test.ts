// Cancelling work end to end (testing/stack.ts: API, outbox relay, NATS, report server, the
// agent process, the swarm): cancelDeployment during a rollout that cannot finish, cleanQueues
// of deploys waiting behind it, killBuild during a long build. Each time the version that
// served before keeps answering HTTP.
import { startGitServer, waitFor, type TestGitServer } from '@skiff/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtImageName } from './agents/outbound/kinds/deploy-application.js';
import { removeBuiltImages } from './testing/built-images.js';
import { docker, freePort, page, startTestStack, webServerSettings, type TestStack } from './testing/stack.js';

const SECOND = 1_000_000_000;
/** A health check that never passes: during its long start period the new task stays `starting`. */
const NEVER_HEALTHY = { Test: ['CMD', 'false'], Interval: 30 * SECOND, StartPeriod: 600 * SECOND, Retries: 3 };

let s: TestStack;
let git: TestGitServer;
/** Applications whose built images go at the end. */
const built: string[] = [];
beforeAll(async () => {
  s = await startTestStack('cancel');
  git = await startGitServer();
}, 120_000);
// A test that failed half-way leaves a rollout that never ends holding the server's deploy slot: end it.
const touched: string[] = [];
afterEach(async () => {
  for (const applicationId of touched.splice(0)) {
    await s.t.call('application.cleanQueues', { applicationId });
    await s.t.call('application.cancelDeployment', { applicationId });
  }
});
afterAll(async () => {
  await git?.stop();
  // The services first: an image whose tag goes while its service runs stays behind, untagged.
  try {
    await s?.close();
  } finally {
    await removeBuiltImages(built);
  }
}, 90_000);

type Deployment = { deploymentId: string; status: string; reason: string | null };

const deploymentOf = async (applicationId: string, deploymentId: string) =>
  ((await s.t.call('deployment.all', { applicationId })).body as Deployment[]).find((d) => d.deploymentId === deploymentId);
const logOf = async (deploymentId: string) => ((await s.t.call('deployment.readLogs', { deploymentId })).body as { log: string }).log;

async function queue(op: string, applicationId: string): Promise<string> {
  const r = await s.t.call(op, { applicationId });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.deploymentId as string;
}

/** Waits until the deployment's log has a line matching `pattern` (the agent reached that step). */
const reached = (deploymentId: string, pattern: RegExp, timeoutMs = 120_000) =>
  waitFor(async () => pattern.test(await logOf(deploymentId)), {
    timeoutMs,
    intervalMs: 250,
    what: () => `deployment ${deploymentId} to log ${pattern} (agent output: ${s.agentOutput().slice(-2000)})`,
  });

const ended = (applicationId: string, deploymentId: string, timeoutMs: number) =>
  waitFor(
    async () => {
      const d = await deploymentOf(applicationId, deploymentId);
      return d && ['done', 'error', 'cancelled'].includes(d.status) ? d : null;
    },
    { timeoutMs, intervalMs: 100, what: `deployment ${deploymentId} to end` },
  );

/** A busybox web application serving `text` on a host port, deployed and answering. */
async function servingApplication(name: string, text: string) {
  const port = await freePort();
  const app = await s.containerApplication(name, { containerImage: 'busybox:latest' });
  touched.push(app.applicationId);
  const res = await s.t.call('application.update', { applicationId: app.applicationId, ...webServerSettings(text, port) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
  await waitFor(async () => (await page(port)) === text, { timeoutMs: 30_000, what: 'the first version to answer' });
  return { ...app, port };
}

/** The next version never becomes healthy; without a fixed host port it rolls out start-first, beside the old task. */
const neverHealthy = (applicationId: string) =>
  s.t.call('application.update', { applicationId, env: 'PAGE=never served', endpointSpecCluster: null, healthCheckCluster: NEVER_HEALTHY });

describe('cancelling deployments', () => {
  it('cancelDeployment stops a rollout that cannot finish within seconds; the previous version keeps answering', async () => {
    const { t } = s;
    const app = await servingApplication('cancel-roll', 'version one');
    expect((await neverHealthy(app.applicationId)).status).toBe(200);
    const v2 = await queue('application.redeploy', app.applicationId);
    await reached(v2, /Waiting for the new version to run/);
    expect(await page(app.port)).toBe('version one');

    const asked = Date.now();
    const res = await t.call('application.cancelDeployment', { applicationId: app.applicationId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ deploymentIds: [v2] });
    const end = await ended(app.applicationId, v2, 15_000);
    expect(Date.now() - asked).toBeLessThan(15_000);
    expect(end).toMatchObject({ status: 'cancelled', reason: 'cancelled by the user' });
    expect(await logOf(v2)).toContain('back to the version it ran before');
    expect(await page(app.port)).toBe('version one');
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('done');
    // The engine finishes its rollback and the old task still answers.
    await waitFor(async () => (await docker(['service', 'inspect', app.appName, '--format', '{{.UpdateStatus.State}}'])).out === 'rollback_completed', {
      timeoutMs: 60_000,
      what: 'the rollback to complete',
    });
    expect(await page(app.port)).toBe('version one');

    const nothing = await t.call('application.cancelDeployment', { applicationId: app.applicationId });
    expect(nothing.status).toBe(400);
  }, 300_000);

  it('cleanQueues drops the deploys waiting behind a running one; they end cancelled and never run', async () => {
    const { t } = s;
    const app = await servingApplication('cancel-queue', 'still here');
    expect((await neverHealthy(app.applicationId)).status).toBe(200);
    const running = await queue('application.redeploy', app.applicationId);
    await reached(running, /Waiting for the new version to run/);
    const waiting = [await queue('application.redeploy', app.applicationId), await queue('application.redeploy', app.applicationId)];

    const res = await t.call('application.cleanQueues', { applicationId: app.applicationId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.deploymentIds).toEqual(waiting);
    for (const id of waiting) {
      expect(await ended(app.applicationId, id, 10_000)).toMatchObject({ status: 'cancelled', reason: 'removed from the queue by the user' });
    }
    expect((await deploymentOf(app.applicationId, running))?.status).toBe('running');

    expect((await t.call('application.cancelDeployment', { applicationId: app.applicationId })).status).toBe(200);
    expect((await ended(app.applicationId, running, 15_000)).status).toBe('cancelled');
    for (const id of waiting) expect(await logOf(id)).not.toMatch(/Deploying image/);
    expect(await page(app.port)).toBe('still here');
  }, 300_000);

  it('killBuild stops a long build within seconds; the running version is left as it was', async () => {
    const { t } = s;
    const port = await freePort();
    const site = (text: string, extra = '') =>
      `FROM busybox:latest\n${extra}RUN mkdir -p /www && echo "${text}" > /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`;
    const repo = await git.createRepo(`kill-build-${s.run}`, { Containerfile: site('built version') });
    const created = await t.call('application.create', { name: 'kill-build', appName: `kill-build-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const app = created.body as { applicationId: string; appName: string };
    s.services.push(app.appName);
    built.push(app.applicationId);
    touched.push(app.applicationId);
    for (const [op, input] of [
      ['application.saveGitProvider', { customGitUrl: repo.url, customGitBranch: 'main', customGitBuildPath: null, watchPaths: null }],
      ['application.saveBuildType', { buildType: 'containerfile', containerfile: 'Containerfile', containerContextPath: null, containerBuildStage: null, legacyVersion: null, packTwoVersion: null }],
      ['application.update', { endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] } }],
    ] as const) {
      const r = await t.call(op, { applicationId: app.applicationId, ...input });
      expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
    }
    const first = await s.deployAndWait(app.applicationId);
    expect(first.status, await logOf(first.deploymentId)).toBe('done');
    await waitFor(async () => (await page(port)) === 'built version', { timeoutMs: 30_000, what: 'the built version to answer' });

    await repo.commit({ Containerfile: site('never built', 'RUN sleep 600\n') });
    const slow = await queue('application.redeploy', app.applicationId);
    await reached(slow, /sleep 600/, 120_000);

    const asked = Date.now();
    const res = await t.call('application.killBuild', { applicationId: app.applicationId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ deploymentIds: [slow] });
    expect(await ended(app.applicationId, slow, 20_000)).toMatchObject({ status: 'cancelled', reason: 'the build was killed by the user' });
    expect(Date.now() - asked).toBeLessThan(20_000);
    expect(await page(port)).toBe('built version');
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('done');
    // The image of the killed build was never made (the first build's is there).
    expect((await docker(['image', 'inspect', builtImageName(app.appName, first.deploymentId)])).ok).toBe(true);
    expect((await docker(['image', 'inspect', builtImageName(app.appName, slow)])).ok).toBe(false);
  }, 300_000);
});
