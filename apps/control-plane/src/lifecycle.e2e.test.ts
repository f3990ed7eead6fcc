// An application's life after its deploy, end to end (testing/stack.ts: API, outbox relay,
// NATS, report server, the agent process and the swarm): stop, start, reload and delete, each
// checked by an HTTP request to the service's host port and by the engine itself.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, freePort, page, startTestStack, webServerSettings, type TestStack } from './testing/stack.js';

/** What an operation that queued a command answers. */
const QUEUED = { commandId: expect.stringMatching(/^cmd_/), status: 'queued' };

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack('life');
}, 120_000);
afterAll(() => s?.close(), 60_000);

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await s.t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

/** Waits until the newest command of `kind` for the application has a result; answers its row. */
const commandResult = (applicationId: string, kind: string) =>
  waitFor(
    async () => {
      const row = await s.t.db
        .selectFrom('commands')
        .select(['id', 'status', 'resultReason'])
        .where('workloadKey', '=', `application:${applicationId}`)
        .where('kind', '=', kind)
        .orderBy('position', 'desc')
        .executeTakeFirst();
      return row && (row.status === 'done' || row.status === 'failed') ? row : null;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: () => `the result of ${kind} (agent output: ${s.agentOutput().slice(-2000)})` },
  );

/** Ids of the service's tasks that should run now. */
const runningTasks = async (name: string) =>
  (await docker(['service', 'ps', name, '--filter', 'desired-state=running', '--format', '{{.ID}}'])).out.split('\n').filter(Boolean).sort();

describe('the lifecycle of a deployed application', () => {
  it('stops, starts, reloads and deletes it, each checked on its port and on the engine', async () => {
    const port = await freePort();
    const { applicationId, appName } = await s.containerApplication('life', { containerImage: 'busybox:latest' });
    await ok('application.update', {
      applicationId,
      ...webServerSettings('alive', port),
      // Quick rolling updates: the reload waits for the engine's monitor period.
      updateConfigCluster: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 1_000_000_000 },
    });
    const status = async () => (await ok('application.one', { applicationId })).applicationStatus;

    // Deploy.
    await ok('application.deploy', { applicationId });
    const deployed = await commandResult(applicationId, 'COMMAND_KIND_DEPLOY_APPLICATION');
    expect(deployed.status, deployed.resultReason ?? '').toBe('done');
    await waitFor(async () => (await page(port)) === 'alive', { timeoutMs: 30_000, what: 'the page to be served' });
    expect(await status()).toBe('done');

    // Stop: idle, and the port stops answering.
    expect(await ok('application.stop', { applicationId })).toEqual(QUEUED);
    const stopped = await commandResult(applicationId, 'COMMAND_KIND_STOP_WORKLOAD');
    expect(stopped.status, stopped.resultReason ?? '').toBe('done');
    expect(await status()).toBe('idle');
    await waitFor(async () => (await page(port)) === null, { timeoutMs: 15_000, what: 'the port to stop answering' });
    expect(await runningTasks(appName)).toEqual([]);

    // Start: done, and it answers again.
    expect(await ok('application.start', { applicationId })).toEqual(QUEUED);
    const started = await commandResult(applicationId, 'COMMAND_KIND_START_WORKLOAD');
    expect(started.status, started.resultReason ?? '').toBe('done');
    expect(await status()).toBe('done');
    await waitFor(async () => (await page(port)) === 'alive', { timeoutMs: 30_000, what: 'the page to be served again' });

    // Reload: new tasks, same spec, still answering.
    const before = await runningTasks(appName);
    expect(before).toHaveLength(1);
    expect(await ok('application.reload', { applicationId, appName })).toEqual(QUEUED);
    const reloaded = await commandResult(applicationId, 'COMMAND_KIND_RELOAD_WORKLOAD');
    expect(reloaded.status, reloaded.resultReason ?? '').toBe('done');
    expect(await status()).toBe('done');
    const after = await runningTasks(appName);
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
    await waitFor(async () => (await page(port)) === 'alive', { timeoutMs: 30_000, what: 'the page to be served after the reload' });

    // Delete: the service goes, then the record.
    await ok('application.delete', { applicationId });
    await waitFor(async () => (await s.t.call('application.one', { applicationId })).status === 404, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: () => `the application to be deleted (agent output: ${s.agentOutput().slice(-2000)})`,
    });
    expect((await docker(['service', 'inspect', appName])).ok).toBe(false);
    expect((await docker(['service', 'ls', '--filter', `label=skiff.id=${applicationId}`, '--format', '{{.Name}}'])).out).toBe('');
    await waitFor(async () => (await page(port)) === null, { timeoutMs: 15_000, what: 'the port to stop answering after the delete' });
  }, 300_000);
});
