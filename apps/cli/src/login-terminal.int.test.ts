// `skiff login` asking for the key in a real terminal (tmux): the key is typed, not echoed,
// and stored for the context.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerType } from '@hono/node-server';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestPlatform, startTestPlatform } from '../../control-plane/src/testing/harness.js';
import { cliBin } from './testing/run-cli.js';

let t: TestPlatform;
let server: ServerType;
let url: string;
let home: string;
const session = `skiff-cli-login-${randomBytes(4).toString('hex')}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', session, ...args], { encoding: 'utf8' });

beforeAll(async () => {
  t = await startTestPlatform();
  const port = await new Promise<number>((resolve) => {
    server = listen(t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) }, resolve);
  });
  url = `http://127.0.0.1:${port}`;
  home = mkdtempSync(join(tmpdir(), 'skiff-cli-tty-'));
}, 60_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

it('asks for the API key without echoing it, then stores the context', async () => {
  const done = join(home, 'exit-code');
  // The program and its arguments are quoted by JSON.stringify: only test-made paths.
  const command = `env HOME=${JSON.stringify(home)} PATH=${JSON.stringify(process.env.PATH ?? '')} ${JSON.stringify(process.execPath)} ${JSON.stringify(cliBin)} login ${url} --name tty; echo $? > ${JSON.stringify(done)}; sleep 60`;
  tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '20', command);
  await waitFor(() => tmux('capture-pane', '-p', '-t', session).includes(`API key for ${url}:`), { timeoutMs: 30_000, what: 'the prompt' });
  tmux('send-keys', '-t', session, '-l', t.ownerKey);
  tmux('send-keys', '-t', session, 'Enter');
  await waitFor(() => existsSync(done) && readFileSync(done, 'utf8').trim() !== '', { timeoutMs: 30_000, what: 'login to end' });
  const screen = tmux('capture-pane', '-p', '-t', session);
  expect(readFileSync(done, 'utf8').trim(), screen).toBe('0');
  expect(screen).toContain('context tty is now current');
  expect(screen).not.toContain(t.ownerKey);
  expect(screen).not.toContain(t.ownerKey.slice(0, 8));
  const config = JSON.parse(readFileSync(join(home, '.config', 'skiff', 'config.json'), 'utf8'));
  expect(config).toEqual({ current: 'tty', contexts: { tty: { url, apiKey: t.ownerKey } } });
});
