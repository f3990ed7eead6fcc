/**
 * How long `tools/up` takes to show metrics for the local server (issue 17: within a minute of
 * start), run by `tools/bench up`: tools/up started for real with its own ports, data
 * directory and proxy container (so it runs beside another tools/up and the tests), then
 * `user.getServerMetrics` asked every 250 ms until the first sample is there. Prints the
 * seconds from the start to "Skiff is up" and to the first sample; stops tools/up (SIGTERM,
 * as Ctrl-C) and removes its proxy container, its volume and the data directory, also on
 * failure. A figure, not a verdict: the build on a first run counts in it.
 *   BENCH_UP_TIMEOUT_SECONDS (300)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@skiff/testing';
import { dockerCommand, repoRoot } from '../apps/control-plane/src/testing/process-stack.js';

const TIMEOUT_MS = Number(process.env.BENCH_UP_TIMEOUT_SECONDS ?? 300) * 1000;
const run = randomBytes(3).toString('hex');
const proxy = `skiff-proxy-bench-up-${run}`;
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-up-'));
const log = (text: string) => process.stderr.write(`bench up: ${text}\n`);
const seconds = (ms: number) => (ms / 1000).toFixed(1);

const ports = { api: await freePort(), grpc: await freePort(), nats: await freePort(), http: await freePort(), https: await freePort(), dashboard: await freePort() };
const env = {
  ...process.env,
  SKIFF_DATA_DIR: dataDir,
  SKIFF_PORT: String(ports.api),
  SKIFF_GRPC_PORT: String(ports.grpc),
  SKIFF_NATS_PORT: String(ports.nats),
  SKIFF_PROXY_CONTAINER: proxy,
  SKIFF_PROXY_HTTP_PORT: String(ports.http),
  SKIFF_PROXY_HTTPS_PORT: String(ports.https),
  SKIFF_PROXY_DASHBOARD_PORT: String(ports.dashboard),
  SKIFF_PROXY_BIND: '127.0.0.1',
  SKIFF_PROXY_ISSUER: 'internal',
};

const started = Date.now();
const up = spawn('bash', [join(repoRoot, 'tools/up')], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
up.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
up.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
const exited = new Promise<void>((resolve) => up.once('exit', () => resolve()));

async function stop(): Promise<void> {
  if (up.exitCode === null && up.signalCode === null) {
    up.kill('SIGTERM');
    const kill = setTimeout(() => up.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(kill);
  }
  await dockerCommand(['rm', '-f', proxy]);
  await dockerCommand(['volume', 'rm', `${proxy}-data`]);
  rmSync(dataDir, { recursive: true, force: true });
}
process.once('SIGINT', () => void stop().then(() => process.exit(130)));

try {
  const alive = () => {
    if (up.exitCode !== null || up.signalCode !== null) throw new Error(`tools/up exited: ${output.slice(-3000)}`);
  };
  await waitFor(() => (alive(), output.includes('Skiff is up')), { timeoutMs: TIMEOUT_MS, intervalMs: 100, what: 'tools/up to be up' });
  const ready = Date.now();
  const keyFile = join(dataDir, 'initial-api-key');
  if (!existsSync(keyFile)) throw new Error('no initial-api-key in the data directory');
  const key = readFileSync(keyFile, 'utf8').trim();
  const url = `http://127.0.0.1:${ports.api}/api/user.getServerMetrics?dataPoints=5`;
  const first = await waitFor(
    async () => {
      alive();
      const res = await fetch(url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5000) });
      if (res.status !== 200) throw new Error(`user.getServerMetrics answered ${res.status}: ${await res.text()}`);
      const body = (await res.json()) as { points: Array<{ at: string; cpuPercent: number; memoryPercent: number }> };
      return body.points[0] ?? null;
    },
    { timeoutMs: TIMEOUT_MS, intervalMs: 250, what: 'the first metrics sample of the local server' },
  );
  const sampled = Date.now();
  log(`first sample: ${JSON.stringify(first)}`);
  process.stdout.write(
    `tools/up: up after ${seconds(ready - started)} s; first metrics sample of the local server after ${seconds(sampled - started)} s ` +
      `(${seconds(sampled - ready)} s after "Skiff is up")\n`,
  );
} catch (err) {
  log(`failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await stop();
}
