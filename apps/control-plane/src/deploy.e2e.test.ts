// A whole deploy, end to end (testing/stack.ts: API, outbox relay, NATS, report server, the
// agent process and the swarm). The application is checked by an HTTP request to the service.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, page, startTestStack, webServerSettings, type TestStack } from './testing/stack.js';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack('deploy');
}, 120_000);
afterAll(() => s?.close(), 60_000);

/** A busybox application serving `text` over HTTP on a host port. */
async function webApplication(name: string, text: string, port: number, containerImage = 'busybox:latest') {
  const app = await s.containerApplication(name, { containerImage });
  const res = await s.t.call('application.update', { applicationId: app.applicationId, ...webServerSettings(text, port) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return app;
}

describe('deploying an application', () => {
  it('runs it on the swarm, where it answers HTTP, and a redeploy rolls out the new version', async () => {
    const { t } = s;
    const port = await freePort();
    const app = await webApplication('web', 'hello from skiff', port);
    const first = await s.deployAndWait(app.applicationId);
    expect(first.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'hello from skiff', { timeoutMs: 30_000, what: 'the page to be served' });
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('done');
    const logs = (await t.call('deployment.readLogs', { deploymentId: first.deploymentId })).body;
    expect(logs.status).toBe('done');
    expect(logs.log).not.toContain('hello from skiff'); // env values never reach the log

    await t.call('application.update', { applicationId: app.applicationId, env: 'PAGE=second version' });
    const second = await s.deployAndWait(app.applicationId, 'application.redeploy');
    expect(second.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'second version', { timeoutMs: 30_000, what: 'the new version to be served' });
    const deployments = (await t.call('deployment.all', { applicationId: app.applicationId })).body;
    expect(deployments.map((d: { status: string }) => d.status)).toEqual(['done', 'done']);
  }, 240_000);

  it('ends in error with the engine reason when the image does not exist', async () => {
    const { t } = s;
    const app = await webApplication('broken', 'never', await freePort(), `skiff-missing-${s.run}:1`);
    const result = await s.deployAndWait(app.applicationId);
    expect(result.status).toBe('error');
    const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(logs.reason).toMatch(/No such image/i);
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('error');
  }, 240_000);
});
