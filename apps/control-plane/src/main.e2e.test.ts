import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@skiff/testing';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-main-'));
const port = 39000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;
let child: ChildProcess | undefined;
let output = '';

/** Starts the control plane with `tools/up`, on the embedded database. */
function start() {
  output = '';
  child = spawn('bash', ['tools/up'], {
    cwd: root,
    env: { ...process.env, SKIFF_DATA_DIR: dataDir, SKIFF_PORT: String(port), SKIFF_GRPC_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  return waitFor(() => output.includes('Skiff API:'), { timeoutMs: 90_000, what: 'the control plane to listen' });
}

async function stop() {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child!.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

afterAll(async () => {
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the control plane process', () => {
  let key = '';

  it('prints the API address and a working first API key, saved 0600', async () => {
    await start();
    const m = /\n\s+(skf_[A-Za-z0-9_-]+)\n/.exec(output);
    expect(m, output).not.toBeNull();
    key = m![1]!;
    expect(output).toContain(`Skiff API: ${base}/api`);
    const file = join(dataDir, 'initial-api-key');
    expect(readFileSync(file, 'utf8').trim()).toBe(key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'local-agent.credential')).mode & 0o777).toBe(0o600);

    expect((await fetch(`${base}/health`)).status).toBe(200);
    const res = await fetch(`${base}/api/project.create`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'first', env: 'KEEP=me' }),
    });
    expect(res.status).toBe(200);
    const anonymous = await fetch(`${base}/api/project.all`);
    expect(anonymous.status).toBe(401);
  }, 120_000);

  it('keeps data and the key across a restart and prints no new key', async () => {
    await stop();
    await start();
    expect(output).not.toMatch(/\n\s+skf_/);
    expect(output).toContain('The first API key is in');
    const res = await fetch(`${base}/api/project.all`, { headers: { authorization: `Bearer ${key}` } });
    const projects = await res.json();
    expect(projects).toMatchObject([{ name: 'first', env: 'KEEP=me' }]);
  }, 120_000);
});
