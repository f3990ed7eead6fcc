// `skiff logs` against the whole single host (testing/stack.ts): a container printing numbered
// lines, read by the local agent and streamed by the control plane.
import type { ServerType } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@skiff/testing';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestStack, startTestStack } from '../../control-plane/src/testing/stack.js';
import { runCli, startCli } from './testing/run-cli.js';

let s: TestStack;
let server: ServerType;
let env: Record<string, string>;
let home: string;
let app: { applicationId: string; appName: string };

beforeAll(async () => {
  s = await startTestStack('cli-logs');
  const port = await new Promise<number>((resolve) => {
    server = listen(s.t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) }, resolve);
  });
  home = mkdtempSync(join(tmpdir(), 'skiff-cli-logs-home-'));
  env = { HOME: home, SKIFF_URL: `http://127.0.0.1:${port}`, SKIFF_API_KEY: s.t.ownerKey };
  app = await s.containerApplication('cli-counter', { containerImage: 'busybox:latest' });
  const updated = await s.t.call('application.update', {
    applicationId: app.applicationId,
    command: 'sh',
    args: ['-c', 'i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.2; done'],
  });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
}, 240_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await s?.close();
  if (home) rmSync(home, { recursive: true, force: true });
}, 60_000);

/** The numbers of `line N` outputs, in order. */
const numbers = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => Number(/^line (\d+)$/.exec(l)?.[1] ?? Number.NaN));
const consecutive = (ns: number[]) => ns.every((n, i) => Number.isInteger(n) && (i === 0 || n === ns[i - 1]! + 1));

describe('skiff logs', () => {
  it('--tail N prints the last N lines and exits 0 when the stream ends', async () => {
    const last = await waitFor(
      async () => {
        const r = await runCli(['logs', app.appName, '--tail', '3'], { env });
        return r.code === 0 && numbers(r.stdout).length === 3 && numbers(r.stdout)[0]! >= 5 ? r : null;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'three lines of the counter' },
    );
    expect(consecutive(numbers(last.stdout)), last.stdout).toBe(true);
    expect(last.stderr).toContain('-- end of log');
  }, 90_000);

  it('-f keeps printing new lines and exits 0 on SIGINT', async () => {
    const follow = startCli(['logs', app.appName, '-f', '--tail', '1'], { env });
    await waitFor(() => numbers(follow.output.stdout).length >= 6, { timeoutMs: 30_000, intervalMs: 100, what: 'new lines while following' });
    const seen = numbers(follow.output.stdout);
    expect(consecutive(seen), follow.output.stdout).toBe(true);
    follow.child.kill('SIGINT');
    const ended = await follow.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).not.toMatch(/error/i);
  }, 60_000);
});
