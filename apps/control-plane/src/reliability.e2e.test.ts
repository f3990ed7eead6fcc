// Deploys survive crashes (issue 4, "Reliability, tested"): the control plane killed with
// SIGKILL while a deploy is queued or running, the agent offline while commands pile up, a
// command delivered twice, and the agent killed during a build. Every part runs as its own
// process (testing/process-stack.ts: NATS, the control plane on its own Postgres database,
// the local agent) against the real Docker Engine, so a kill is a real crash and a start a
// real reboot of the same installation. One stack for the whole file.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { commandSubject } from '@skiff/domain';
import { freshDatabase, startGitServer, waitFor, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SecretBox } from './crypto/secret-box.js';
import { loadSecretKey } from './secret-key.js';
import { CommandOutbox } from './agents/outbound/outbox.js';
import { loadCommandSigningKey } from './agents/command-signing-key.js';
import { dockerCommand, startProcessStack, type ProcessStack } from './testing/process-stack.js';
import { removeBuiltImages } from './testing/built-images.js';
import { freePort, page, webServerSettings } from './testing/stack.js';

const DEPLOY = 'COMMAND_KIND_DEPLOY_APPLICATION';
let s: ProcessStack;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let git: TestGitServer;
/** Applications whose images (labelled skiff.id) are removed at the end. */
const built: string[] = [];

beforeAll(async () => {
  database = await freshDatabase(inject('postgresUrl'));
  git = await startGitServer();
  s = await startProcessStack({ label: 'rel', databaseUrl: database.url });
}, 180_000);
afterAll(async () => {
  await s?.close();
  await git?.stop();
  await database?.drop();
  await removeBuiltImages(built, 60_000);
}, 120_000);

/** Rolling updates that settle after half a second (the engine's default monitor period is five). */
const quickUpdates = { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 500_000_000 };

/** A busybox application serving `text` on a host port. */
async function webApplication(name: string, text: string, extra: Record<string, unknown> = {}) {
  const port = await freePort();
  const app = await s.containerApplication(name);
  const settings = { ...webServerSettings(text, port), updateConfigCluster: quickUpdates, ...extra };
  await s.ok('application.update', { applicationId: app.applicationId, ...settings });
  return { ...app, port };
}

const served = (port: number, text: string) =>
  waitFor(async () => (await page(port)) === text, { timeoutMs: 30_000, what: `"${text}" to be served on port ${port}` });

const deploy = async (applicationId: string) => (await s.ok('application.deploy', { applicationId })).deploymentId as string;

const statusOf = async (applicationId: string, deploymentId: string) =>
  (await s.deployments(applicationId)).find((d) => d.deploymentId === deploymentId)?.status;

/** The application's commands in the order they were accepted. */
const commandsOf = (applicationId: string) =>
  s.db
    .selectFrom('commands')
    .select(['id', 'kind', 'status', 'deploymentId', 'payload', 'resultReason', 'finishedAt'])
    .where('workloadKey', '=', `application:${applicationId}`)
    .orderBy('position')
    .execute();

const waitForCommands = (applicationId: string, count: number, statuses: string[], what: string) =>
  waitFor(
    async () => {
      const rows = await commandsOf(applicationId);
      return rows.length === count && rows.every((r) => statuses.includes(r.status)) ? rows : null;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: `${what} (agent: ${s.agent.tail(1500)})` },
  );

/** What the engine says of a service: its version, ForceUpdate, deployment label, replicas and running tasks. */
async function serviceState(name: string) {
  const inspected = await dockerCommand(['service', 'inspect', name, '--format', '{{json .}}']);
  expect(inspected.ok, inspected.err).toBe(true);
  const svc = JSON.parse(inspected.out);
  const tasks = await dockerCommand(['service', 'ps', name, '--filter', 'desired-state=running', '--format', '{{.ID}}']);
  return {
    version: svc.Version.Index as number,
    forceUpdate: svc.Spec.TaskTemplate.ForceUpdate as number,
    deployment: svc.Spec.Labels['skiff.deployment'] as string,
    replicas: svc.Spec.Mode.Replicated?.Replicas as number,
    tasks: tasks.out.split('\n').filter(Boolean).sort(),
  };
}

/** How many times the agent's journal says it began to run each command (start lines and compacted attempts). */
function startsOf(ids: string[]): Record<string, number> {
  const counts = Object.fromEntries(ids.map((id) => [id, 0]));
  for (const line of s.journal()) {
    if (!(line.id in counts)) continue;
    if (line.op === 'start') counts[line.id]! += 1;
    if (line.op === 'entry') counts[line.id] = line.attempts ?? 0;
  }
  return counts;
}

describe('the control plane killed (SIGKILL) and started again', () => {
  it('runs a deploy that waited in the stream for an offline agent: queued after the restart, then done', async () => {
    const app = await webApplication('queued', 'queued then served');
    await s.agent.stop('SIGKILL');
    const deploymentId = await deploy(app.applicationId);
    await waitForCommands(app.applicationId, 1, ['published'], 'the relay to publish the deploy');

    await s.controlPlane.stop('SIGKILL');
    await s.controlPlane.start();
    expect(await statusOf(app.applicationId, deploymentId)).toBe('queued');

    await s.agent.start();
    const end = await s.deploymentEnd(app.applicationId, deploymentId);
    expect(end.status, end.reason ?? '').toBe('done');
    await served(app.port, 'queued then served');
  }, 240_000);

  it('publishes after the restart a deploy it accepted but could not publish before the kill', async () => {
    const app = await webApplication('unsent', 'sent after the restart');
    await s.agent.stop('SIGTERM');
    await s.nats.stop('SIGTERM');
    const deploymentId = await deploy(app.applicationId);
    // NATS is down: the command can only wait in the outbox.
    expect((await commandsOf(app.applicationId)).map((c) => c.status)).toEqual(['pending']);

    await s.controlPlane.stop('SIGKILL');
    await s.nats.start();
    await s.controlPlane.start();
    await waitForCommands(app.applicationId, 1, ['published'], 'the restarted relay to publish the deploy');
    expect(await statusOf(app.applicationId, deploymentId)).toBe('queued');

    await s.agent.start();
    const end = await s.deploymentEnd(app.applicationId, deploymentId);
    expect(end.status, end.reason ?? '').toBe('done');
    await served(app.port, 'sent after the restart');
  }, 240_000);

  it('ends a deploy that was running on the agent from the reports the agent delivers after the restart', async () => {
    // Healthy 6 s after start: the rollout runs on while the control plane is down.
    const app = await webApplication('running', 'rolled out', {
      args: ['-c', 'mkdir -p /www; echo "$PAGE" > /www/index.html; (sleep 6; touch /tmp/ready) & exec httpd -f -p 8080 -h /www'],
      healthCheckCluster: { Test: ['CMD-SHELL', 'test -f /tmp/ready'], Interval: 500_000_000, Timeout: 1_000_000_000, Retries: 60 },
    });
    const deploymentId = await deploy(app.applicationId);
    await waitFor(async () => (await statusOf(app.applicationId, deploymentId)) === 'running', {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the deployment to run on the agent',
    });
    const [command] = await commandsOf(app.applicationId);
    const agentMark = s.agent.mark();
    await s.controlPlane.stop('SIGKILL');

    // The agent finishes the rollout alone and keeps its reports until the control plane is back.
    await waitFor(() => s.journal().some((l) => l.op === 'finish' && l.id === command!.id), {
      timeoutMs: 60_000,
      what: `the agent to finish the deploy (agent: ${s.agent.tail(1500)})`,
    });
    await s.agent.waitForOutput('control plane not reachable, report will be retried', agentMark, 30_000);
    await s.controlPlane.start();
    expect(['running', 'done']).toContain(await statusOf(app.applicationId, deploymentId));

    const end = await s.deploymentEnd(app.applicationId, deploymentId);
    expect(end.status, end.reason ?? '').toBe('done');
    expect((await s.ok('application.one', { applicationId: app.applicationId })).applicationStatus).toBe('done');
    const logs = await s.ok('deployment.readLogs', { deploymentId });
    expect(logs.log).toContain('Deployment done');
    expect(logs.log).not.toContain('runs it again');
    expect(startsOf([command!.id])).toEqual({ [command!.id]: 1 });
    await served(app.port, 'rolled out');
  }, 240_000);
});

describe('an offline server', () => {
  it('runs the commands that waited for it exactly once each, in order, when its agent returns', async () => {
    const app = await webApplication('offline', 'first');
    const first = await deploy(app.applicationId);
    expect((await s.deploymentEnd(app.applicationId, first)).status).toBe('done');
    await served(app.port, 'first');

    await s.agent.stop('SIGTERM');
    await s.ok('application.update', { applicationId: app.applicationId, env: 'PAGE=second' });
    const second = await deploy(app.applicationId);
    await s.ok('application.update', { applicationId: app.applicationId, env: 'PAGE=third' });
    const third = (await s.ok('application.redeploy', { applicationId: app.applicationId })).deploymentId as string;
    await s.ok('application.stop', { applicationId: app.applicationId });
    await s.ok('application.start', { applicationId: app.applicationId });
    const waiting = await waitForCommands(app.applicationId, 5, ['done', 'published'], 'the relay to publish them all');
    expect(waiting.map((c) => c.status)).toEqual(['done', 'published', 'published', 'published', 'published']);
    expect(await statusOf(app.applicationId, second)).toBe('queued');
    expect(await statusOf(app.applicationId, third)).toBe('queued');
    expect((await serviceState(app.appName)).forceUpdate).toBe(1);
    expect(await page(app.port)).toBe('first'); // nothing ran while the agent was away

    await s.agent.start();
    const rows = await waitForCommands(app.applicationId, 5, ['done', 'failed'], 'every command to end');
    expect(rows.map((r) => [r.kind, r.status, r.resultReason])).toEqual([
      [DEPLOY, 'done', null],
      [DEPLOY, 'done', null],
      [DEPLOY, 'done', null],
      ['COMMAND_KIND_STOP_WORKLOAD', 'done', null],
      ['COMMAND_KIND_START_WORKLOAD', 'done', null],
    ]);
    const finished = rows.map((r) => r.finishedAt!.getTime());
    expect(finished).toEqual([...finished].sort((a, b) => a - b));

    // Once each, in the order they were accepted: each began after the one before it finished.
    const ids = rows.slice(1).map((r) => r.id);
    expect(startsOf(ids)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
    const order = s
      .journal()
      .filter((l) => ids.includes(l.id) && (l.op === 'start' || l.op === 'finish'))
      .map((l) => `${l.op} ${ids.indexOf(l.id)}`);
    expect(order).toEqual(['start 0', 'finish 0', 'start 1', 'finish 1', 'start 2', 'finish 2', 'start 3', 'finish 3']);

    const deployments = await s.deployments(app.applicationId);
    expect(deployments.map((d) => [d.deploymentId, d.status])).toEqual([
      [third, 'done'],
      [second, 'done'],
      [first, 'done'],
    ]);
    const state = await serviceState(app.appName);
    expect(state).toMatchObject({ forceUpdate: 3, deployment: third, replicas: 1 });
    expect(state.tasks).toHaveLength(1);
    expect((await s.ok('application.one', { applicationId: app.applicationId })).applicationStatus).toBe('done');
    await served(app.port, 'third');
  }, 300_000);
});

describe('a command delivered twice', () => {
  it('is not run again: the agent reports its stored result and the service does not change', async () => {
    const app = await webApplication('twice', 'once');
    const deploymentId = await deploy(app.applicationId);
    expect((await s.deploymentEnd(app.applicationId, deploymentId)).status).toBe('done');
    await s.ok('application.stop', { applicationId: app.applicationId });
    await s.ok('application.start', { applicationId: app.applicationId });
    const rows = await waitForCommands(app.applicationId, 3, ['done'], 'deploy, stop and start to end');
    await served(app.port, 'once');
    const before = await serviceState(app.appName);

    // The same messages again, under new message ids so JetStream does not drop them: a
    // deploy and a stop (which would scale the service to nothing if it ran again), signed
    // as the relay signs them.
    const outbox = new CommandOutbox(new SecretBox(loadSecretKey(s.dirs.controlPlane)));
    const signer = loadCommandSigningKey(s.dirs.controlPlane);
    const mark = s.agent.mark();
    const nc = await connect({ servers: s.natsUrl });
    try {
      const js = jetstream(nc);
      for (const row of rows.slice(0, 2)) {
        const data = outbox.open(row.payload);
        const signature = headers();
        for (const [name, value] of Object.entries(signer.sign(commandSubject('local'), data))) signature.set(name, value);
        await js.publish(commandSubject('local'), data, { msgID: `again-${row.id}`, headers: signature });
      }
    } finally {
      await nc.close();
    }
    for (const row of rows.slice(0, 2)) {
      await waitFor(
        () =>
          s.agent
            .output(mark)
            .split('\n')
            .some((l) => l.includes(row.id) && l.includes('command already handled')),
        { timeoutMs: 30_000, what: `the agent to recognise ${row.id} (agent: ${s.agent.tail(1500)})` },
      );
    }

    expect(await serviceState(app.appName)).toEqual(before);
    expect(startsOf(rows.map((r) => r.id))).toEqual(Object.fromEntries(rows.map((r) => [r.id, 1])));
    expect((await commandsOf(app.applicationId)).map((r) => r.status)).toEqual(['done', 'done', 'done']);
    expect((await s.deployments(app.applicationId)).map((d) => d.status)).toEqual(['done']);
    expect((await s.ok('application.one', { applicationId: app.applicationId })).applicationStatus).toBe('done');
    expect(await page(app.port)).toBe('once');
  }, 240_000);
});

/** Pids of the processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const describeProcesses = (pids: number[]) =>
  pids.map((p) => {
    try {
      return `${p} ${readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`;
    } catch {
      return `${p}`;
    }
  }).join('; ') || 'none';

describe('the agent killed (SIGKILL) during a build', () => {
  it('leaves no build running, runs the deploy again when it restarts, and the next deploy works', async () => {
    const port = await freePort();
    // A step of this run alone, so no earlier build's cache skips it.
    const repo = await git.createRepo(`rel-${s.run}`, {
      Containerfile: `FROM busybox:latest\nRUN echo ${s.run} > /run-id && sleep 15\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      'index.html': 'built once\n',
    });
    const app = await s.ok('application.create', { name: 'built', appName: `built-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
    s.services.push(app.appName);
    built.push(app.applicationId);
    const applicationId = app.applicationId as string;
    await s.ok('application.saveGitProvider', { applicationId, customGitUrl: repo.url, customGitBranch: 'main', customGitBuildPath: null, watchPaths: null });
    await s.ok('application.saveBuildType', {
      applicationId,
      buildType: 'containerfile',
      containerfile: 'Containerfile',
      containerContextPath: null,
      containerBuildStage: null,
      legacyVersion: null,
      packTwoVersion: null,
    });
    await s.ok('application.update', {
      applicationId,
      updateConfigCluster: quickUpdates,
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
    });

    const deploymentId = await deploy(applicationId);
    await waitFor(async () => (await s.ok('deployment.readLogs', { deploymentId })).log.includes(`echo ${s.run} > /run-id && sleep 15`), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: `the build to reach its slow step (agent: ${s.agent.tail(1500)})`,
    });
    const [command] = await commandsOf(applicationId);
    const buildDir = join(s.dirs.agent, 'builds');
    expect(processesMentioning(buildDir).length).toBeGreaterThan(0); // the build runs
    await s.agent.stop('SIGKILL');

    // Nothing of the killed agent's build runs on without it.
    // (A build left running would hold no deadline and no build slot, and race the re-run.)
    await waitFor(() => processesMentioning(buildDir).length === 0, {
      timeoutMs: 10_000,
      what: `the killed agent's build processes to end (still running: ${describeProcesses(processesMentioning(buildDir))})`,
    });
    expect(await statusOf(applicationId, deploymentId)).toBe('running');

    await s.agent.start();
    const end = await s.deploymentEnd(applicationId, deploymentId);
    expect(end.status, end.reason ?? '').toBe('done');
    expect((await s.ok('deployment.readLogs', { deploymentId })).log).toContain('The agent stopped during this deployment and runs it again');
    expect(startsOf([command!.id])).toEqual({ [command!.id]: 2 });
    await served(port, 'built once');
    expect(readdirSync(buildDir)).toEqual([]);

    // The next deploy builds the next commit and serves it.
    await repo.commit({ 'index.html': 'built twice\n' });
    const next = await deploy(applicationId);
    const nextEnd = await s.deploymentEnd(applicationId, next);
    expect(nextEnd.status, nextEnd.reason ?? '').toBe('done');
    await served(port, 'built twice');
  }, 300_000);
});
