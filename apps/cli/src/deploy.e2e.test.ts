// `skiff deploy` against the whole single host (testing/stack.ts: API, NATS, the local agent,
// the swarm): it follows the deployment's log to its end and exits by how it ended.
import type { ServerType } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestStack, freePort, startTestStack, webServerSettings } from '../../control-plane/src/testing/stack.js';
import { runCli } from './testing/run-cli.js';

let s: TestStack;
let server: ServerType;
let env: Record<string, string>;
let home: string;

beforeAll(async () => {
  s = await startTestStack('cli-deploy');
  const port = await new Promise<number>((resolve) => {
    server = listen(s.t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) }, resolve);
  });
  home = mkdtempSync(join(tmpdir(), 'skiff-cli-e2e-home-'));
  env = { HOME: home, SKIFF_URL: `http://127.0.0.1:${port}`, SKIFF_API_KEY: s.t.ownerKey };
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await s?.close();
  if (home) rmSync(home, { recursive: true, force: true });
}, 60_000);

async function application(name: string, image: string) {
  const app = await s.containerApplication(name, { containerImage: image });
  const res = await s.t.call('application.update', { applicationId: app.applicationId, ...webServerSettings('hello from the cli', await freePort()) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return app;
}

describe('skiff deploy', () => {
  it('prints the log as the agent writes it, to "done", and exits 0; a second deploy redeploys', async () => {
    const app = await application('cli-web', 'busybox:latest');
    const first = await runCli(['deploy', app.appName], { env, timeoutMs: 180_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(new RegExp(`^Deploying \\S+ \\(${app.applicationId}\\)`, 'm'));
    expect(first.stdout).toContain('Deployment done');
    expect(first.stderr).toMatch(/Deployment dep_\S+: done/);
    const second = await runCli(['deploy', app.applicationId, '--json'], { env, timeoutMs: 180_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(new RegExp(`^Redeploying \\S+ \\(${app.applicationId}\\)`, 'm'));
    expect(JSON.parse(second.stdout)).toMatchObject({ status: 'done' });
    const status = await runCli(['status', '--json'], { env });
    expect(JSON.parse(status.stdout).find((w: { id: string }) => w.id === app.applicationId)).toMatchObject({ applicationStatus: 'done' });
  }, 300_000);

  it('exits 1 with the reason when the deployment fails', async () => {
    const app = await application('cli-broken', `skiff-missing-${s.run}:1`);
    const failed = await runCli(['deploy', app.applicationId], { env, timeoutMs: 180_000 });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/ended error: .*No such image/i);
  }, 300_000);
});
