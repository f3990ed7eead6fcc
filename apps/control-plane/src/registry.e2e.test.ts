// Deploying an image from a private registry, end to end (testing/stack.ts: API, outbox relay,
// NATS, report server, the agent process and the swarm): a docker-registry with basic auth on
// loopback holds the image (pushed by this file, then removed from the engine), the API stores
// the application's registry login, and the agent pulls with it and runs the service. Checked
// by an HTTP request to the running service.
import { randomBytes } from 'node:crypto';
import { startTestRegistry, waitFor, type TestRegistry } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, freePort, page, startTestStack, webServerSettings, type TestStack } from './testing/stack.js';

let s: TestStack;
let registry: TestRegistry;
let image: string;
beforeAll(async () => {
  registry = await startTestRegistry();
  image = await registry.push('busybox:latest', `skiff-e2e/web:${randomBytes(3).toString('hex')}`);
  s = await startTestStack('registry');
}, 120_000);
afterAll(async () => {
  await s?.close();
  // After the services: it also removes the engine's copy of the pulled image.
  await registry?.stop();
}, 60_000);

const imagePresent = async (ref: string) => (await docker(['image', 'inspect', ref])).ok;

/** A busybox application from the private registry, serving `page` over HTTP on a host port. */
async function privateWebApplication(name: string, password: string, text: string, port: number) {
  const app = await s.containerApplication(name, {
    containerImage: image,
    username: registry.username,
    password,
    registryUrl: `http://${registry.address}`,
  });
  const stored = await s.t.call('application.one', { applicationId: app.applicationId });
  expect(JSON.stringify(stored.body)).not.toContain(password);
  const res = await s.t.call('application.update', { applicationId: app.applicationId, ...webServerSettings(text, port) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return app;
}

describe('deploying an application from a private registry', () => {
  it('ends in error with the registry reason when the password is wrong', async () => {
    expect(await imagePresent(image)).toBe(false);
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const app = await privateWebApplication('denied', wrong, 'never', await freePort());
    const result = await s.deployAndWait(app.applicationId);
    expect(result.status).toBe('error');
    const logs = (await s.t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(logs.reason).toMatch(/^could not pull image .+: .*(unauthorized|authentication required)/i);
    expect(`${logs.log}${logs.reason}${s.agentOutput()}`).not.toContain(wrong);
    expect((await s.t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('error');
    expect(await imagePresent(image)).toBe(false);
  }, 240_000);

  it('pulls the image with the stored login and runs it, where it answers HTTP', async () => {
    expect(await imagePresent(image)).toBe(false);
    const port = await freePort();
    const app = await privateWebApplication('private', registry.password, 'hello from a private registry', port);
    const result = await s.deployAndWait(app.applicationId);
    expect(result.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'hello from a private registry', { timeoutMs: 30_000, what: 'the page to be served' });
    expect(await imagePresent(image)).toBe(true);
    const logs = (await s.t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(logs.log).toContain(`Pulling image ${image} from ${registry.address} with the application's registry credentials`);
    expect(logs.log).toContain(`Pulled image ${image}`);
    expect(`${logs.log}${s.agentOutput()}`).not.toContain(registry.password);
  }, 240_000);
});
