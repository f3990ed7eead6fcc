/**
 * The proxy benchmark (issues 5 and 15), run by `tools/bench proxy`. It prints figures; only
 * the request rate kept with many domains is flagged against its target.
 *
 * 1. Config changes with 1, 100 and 1000 domains: the agent's ProxyManager runs its own Caddy
 *    container (the real caddy:2 image); each run changes one domain of N (a new host in
 *    place of the last one), renders the whole config with caddyConfig (render time), loads
 *    it with `apply()` (load time: /load answered and the last good config written), and
 *    requests the new host through the proxy until it answers (apply -> served).
 * 2. Request latency: a small web service on skiff-network, published on a host-mode port,
 *    requested directly and through the proxy's HTTP port by Host header: sequential
 *    requests on one keep-alive client connection (turns of direct and proxy), then wrk with
 *    concurrent connections. Through the proxy once with a 1-domain config, then with the
 *    largest config twice: the domains above (a few handler chains, so a few Caddy routes),
 *    and every domain with a chain of its own (its own internalPath). Each time the host
 *    requested is the one Caddy tries last: its own upstream (a network alias of the web
 *    service) and a name sorting after every other. It prints the request rate of each
 *    large config as a fraction of the 1-domain rate, against the target (>= 0.90, issue 15).
 *    The service is `caddy respond`
 *    (caddy:2) by default; busybox httpd, as the tests use, closes every connection and
 *    listens with a backlog of 9, so under concurrency its own SYN drops (1 s retransmits)
 *    set the tail on both paths: BENCH_BACKEND=busybox measures it anyway.
 *
 * Everything it creates (the container, its volume, the service, the data directory) has a
 * name of this run and is removed at the end, also after a failure or Ctrl-C.
 *
 *   BENCH_SIZES (1,100,1000) domains per config, BENCH_RUNS (10) measured changes per size,
 *   BENCH_REQUESTS (2000) sequential requests per target, BENCH_SECONDS (10) per wrk run,
 *   BENCH_WARMUP (2) s of wrk before each, BENCH_CONNECTIONS (32), BENCH_THREADS (2),
 *   BENCH_BACKEND (caddy | busybox)
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_NETWORK, caddyConfig, type ProxyRoute, type ServerProxyInput } from '@skiff/domain';
import { ALICE, BOB } from '../libs/domain/src/proxy/test-fixtures.js';
import { freePort, waitFor } from '@skiff/testing';
import { pino } from 'pino';
import { DockerodeDriver } from '../apps/agent/src/docker/dockerode-driver.js';
import { ProxyManager } from '../apps/agent/src/proxy/proxy-manager.js';

const SIZES = (process.env.BENCH_SIZES ?? '1,100,1000').split(',').map((s) => positive(s.trim(), 'BENCH_SIZES'));
const RUNS = positive(process.env.BENCH_RUNS ?? '10', 'BENCH_RUNS');
const REQUESTS = positive(process.env.BENCH_REQUESTS ?? '2000', 'BENCH_REQUESTS');
const SECONDS = positive(process.env.BENCH_SECONDS ?? '10', 'BENCH_SECONDS');
const WARMUP = positive(process.env.BENCH_WARMUP ?? '2', 'BENCH_WARMUP');
const CONNECTIONS = positive(process.env.BENCH_CONNECTIONS ?? '32', 'BENCH_CONNECTIONS');
const THREADS = positive(process.env.BENCH_THREADS ?? '2', 'BENCH_THREADS');
const BACKEND = process.env.BENCH_BACKEND ?? 'caddy';
if (BACKEND !== 'caddy' && BACKEND !== 'busybox') throw new Error('BENCH_BACKEND must be caddy or busybox');
const SERVICE_PORT = 8080;
/** The request rate N domains must keep, as a fraction of one domain's (issue 15). */
const TARGET_RATIO = 0.9;

function positive(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be whole numbers from 1, got ${JSON.stringify(text)}`);
  return n;
}

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

function docker(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(DOCKER, args, { timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`docker ${args.join(' ')}: ${String(stderr).trim() || err.message}`)) : resolve(String(stdout).trim()),
    ),
  );
}

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Names of this run: the engine is shared with other benchmarks and tests. */
const run = randomBytes(3).toString('hex');
const names = {
  container: `skiff-proxy-bench-${run}`,
  volume: `skiff-proxy-data-bench-${run}`,
  web: `proxy-bench-web-${run}`,
  /** A second name of the web service: the measured domain's upstream, a chain no other domain has. */
  lastUpstream: `proxy-bench-last-${run}`,
};
const PAGE = `proxy bench ${run}`;
const BACKENDS = {
  caddy: { label: 'caddy respond', image: 'caddy:2', command: ['caddy', 'respond', '--listen', `:${SERVICE_PORT}`, '--body', PAGE] },
  busybox: {
    label: 'busybox httpd',
    image: 'busybox:latest',
    command: ['sh', '-c', `mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p ${SERVICE_PORT} -h /www`],
  },
}[BACKEND];
const hostOf = (i: number) => `site-${String(i).padStart(5, '0')}.bench-${run}.test`;

/**
 * N domains like a server's: all to the one web service; every 5th with a stripped path
 * prefix on its own host, every 10th (from 3) with basic auth of two users. The domain at
 * `changed` is the one a run changes, a plain one.
 */
function domains(n: number, changed: string, last: Partial<ProxyRoute> = {}): ProxyRoute[] {
  const routes: ProxyRoute[] = [];
  for (let i = 0; i < n - 1; i++) {
    const withPath = i % 5 === 1;
    routes.push(route(`d${i}`, hostOf(i), {
      path: withPath ? '/api' : null,
      stripPath: withPath,
      basicAuth: i % 10 === 3 ? [ALICE, BOB] : [],
    }));
  }
  routes.push(route('changed', changed, last));
  return routes;
}

/** N domains, each with a handler chain of its own (an internalPath of its own): no two share a Caddy route. */
function distinctDomains(n: number, last: string): ProxyRoute[] {
  const routes = Array.from({ length: n - 1 }, (_, i) => route(`d${i}`, hostOf(i), { internalPath: `/d${i}` }));
  routes.push(route('last', last, { upstream: names.lastUpstream }));
  return routes;
}

function route(domainId: string, host: string, extra: Partial<ProxyRoute>): ProxyRoute {
  return {
    domainId,
    host,
    path: null,
    port: SERVICE_PORT,
    https: false,
    certificateType: 'none',
    customCertResolver: null,
    customEntrypoint: null,
    internalPath: null,
    stripPath: false,
    middlewares: null,
    enabled: true,
    upstream: names.web,
    basicAuth: [],
    ...extra,
  };
}

const proxyInput = (routes: ProxyRoute[]): ServerProxyInput => ({
  routes,
  certificates: [],
  platform: null,
  middlewares: {},
  options: { adminSocket: '/run/caddy/admin.sock' },
});

/** One GET; its status and body. */
function get(port: number, host: string | null, agent: Agent | false, timeoutMs = 5000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent, headers: host ? { Host: host } : {}, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const serves = async (port: number, host: string | null) => {
  try {
    const res = await get(port, host, false, 1000);
    return res.status === 200 && res.body.trim() === PAGE;
  } catch {
    return false;
  }
};

/** Requests `host` through the proxy back to back until it serves the page; milliseconds from `started`. */
async function untilServed(port: number, host: string, started: number): Promise<number> {
  await waitFor(() => serves(port, host), { timeoutMs: 30_000, intervalMs: 1, what: `${host} through the proxy` });
  return performance.now() - started;
}

interface ApplyFigures {
  size: number;
  configKb: number;
  render: number[];
  load: number[];
  served: number[];
}

async function applyOrFail(manager: ProxyManager, config: Record<string, unknown>) {
  const result = await manager.apply(config, { timeoutMs: 60_000 });
  if (!result.ok) throw new Error(`Caddy refused the config (${result.status}): ${result.reason}`);
}

/** One warm-up and RUNS measured changes of a config of `size` domains. */
async function applyBench(manager: ProxyManager, httpPort: number, size: number): Promise<ApplyFigures> {
  const figures: ApplyFigures = { size, configKb: 0, render: [], load: [], served: [] };
  for (let r = 0; r <= RUNS; r++) {
    const changed = `new-${size}-${r}.bench-${run}.test`;
    const routes = domains(size, changed);
    const t0 = performance.now();
    const config = caddyConfig(proxyInput(routes));
    const t1 = performance.now();
    await applyOrFail(manager, config);
    const t2 = performance.now();
    const served = await untilServed(httpPort, changed, t1);
    if (r === 0) {
      figures.configKb = Buffer.byteLength(JSON.stringify(config)) / 1024;
      continue;
    }
    figures.render.push(t1 - t0);
    figures.load.push(t2 - t1);
    figures.served.push(served);
  }
  return figures;
}

interface Latency {
  p50: number;
  p99: number;
  rps: number;
  errors: string;
}

/** Sequential GETs on one keep-alive connection (reopened when the server closes it), in turns of the targets. */
async function sequential(targets: { port: number; host: string | null }[]): Promise<Latency[]> {
  const agents = targets.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const samples: number[][] = targets.map(() => []);
  const spent = targets.map(() => 0);
  const errors = targets.map(() => 0);
  const turns = 4;
  const once = async (i: number) => {
    const t = targets[i]!;
    const start = performance.now();
    const res = await get(t.port, t.host, agents[i]!);
    const ms = performance.now() - start;
    if (res.status !== 200) errors[i]!++;
    return ms;
  };
  for (let i = 0; i < targets.length; i++) for (let k = 0; k < 100; k++) await once(i);
  for (let turn = 0; turn < turns; turn++) {
    for (let i = 0; i < targets.length; i++) {
      const count = Math.ceil(REQUESTS / turns);
      const begin = performance.now();
      for (let k = 0; k < count; k++) samples[i]!.push(await once(i));
      spent[i]! += performance.now() - begin;
    }
  }
  for (const a of agents) a.destroy();
  return samples.map((s, i) => ({
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    rps: (s.length / spent[i]!) * 1000,
    errors: String(errors[i]),
  }));
}

let wrkChild: ChildProcess | null = null;

function wrk(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    wrkChild = execFile('wrk', args, { timeout: (SECONDS + WARMUP + 60) * 1000, env: { ...process.env, BENCH_KEY: '' } }, (err, stdout, stderr) => {
      wrkChild = null;
      if (err) reject(new Error(`wrk: ${String(stderr).trim() || err.message}`));
      else resolve(String(stdout));
    });
  });
}

/** wrk with CONNECTIONS connections (tools/bench.lua reports p50/p99 in microseconds). */
async function concurrent(port: number, host: string | null): Promise<Latency> {
  const base = [`-t${THREADS}`, `-c${CONNECTIONS}`, '-s', 'tools/bench.lua', ...(host ? ['-H', `Host: ${host}`] : [])];
  const url = `http://127.0.0.1:${port}/`;
  await wrk([...base, `-d${WARMUP}s`, url]);
  const out = await wrk([...base, `-d${SECONDS}s`, url]);
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`wrk gave no result:\n${out}`);
  const [rps, p50, p99, status, socket] = line.split(' ').slice(1).map(Number) as [number, number, number, number, number];
  return { rps, p50: p50 / 1000, p99: p99 / 1000, errors: `${status}/${socket}` };
}

async function main() {
  const driver = new DockerodeDriver();
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-proxy-'));
  let manager: ProxyManager | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      wrkChild?.kill('SIGTERM');
      await manager?.stop().catch(() => {});
      const attempt = async (what: string, args: string[]) => {
        await docker(args).catch((err: unknown) => {
          if (!/No such|not found/i.test(String(err))) log(`removing ${what}: ${String(err)}`);
        });
      };
      await attempt('the proxy container', ['rm', '-f', names.container]);
      await attempt('the proxy volume', ['volume', 'rm', names.volume]);
      await attempt('the web service', ['service', 'rm', names.web]);
      await waitFor(async () => (await docker(['ps', '-aq', '--filter', `label=com.docker.swarm.service.name=${names.web}`])) === '', {
        timeoutMs: 60_000,
        intervalMs: 250,
        what: `the containers of ${names.web} to be gone`,
      }).catch((err: unknown) => log(String(err)));
      rmSync(dataDir, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  try {
    const [httpPort, httpsPort, directPort] = [await freePort(), await freePort(), await freePort()];
    log(`starting the web service ${names.web} (${BACKENDS.label} on ${PLATFORM_NETWORK}, host port ${directPort})`);
    await driver.ensureSwarm();
    await driver.ensureNetwork(PLATFORM_NETWORK);
    await driver.createOrUpdateService({
      Name: names.web,
      Labels: { 'skiff.managed': 'true' },
      TaskTemplate: {
        ContainerSpec: { Image: BACKENDS.image, Env: [`PAGE=${PAGE}`], Command: BACKENDS.command, Init: true, StopGracePeriod: 1e9 },
        Networks: [{ Target: PLATFORM_NETWORK, Aliases: [names.lastUpstream] }],
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr', Ports: [{ TargetPort: SERVICE_PORT, PublishedPort: directPort, PublishMode: 'host' }] },
    });

    log(`starting the proxy ${names.container} (caddy:2, host ports ${httpPort}/${httpsPort})`);
    manager = new ProxyManager({
      driver,
      dataDir,
      log: pino({ level: process.env.BENCH_LOG_LEVEL ?? 'warn' }, pino.destination(2)),
      ports: { http: httpPort, https: httpsPort, hostIp: '127.0.0.1' },
      containerName: names.container,
      volumeName: names.volume,
    });
    await manager.ensure(120_000);
    await waitFor(() => serves(directPort, null), { timeoutMs: 120_000, intervalMs: 100, what: `${names.web} on port ${directPort}` });

    const applied: ApplyFigures[] = [];
    for (const size of SIZES) {
      log(`config changes with ${size} domains: ${RUNS} runs after one warm-up`);
      applied.push(await applyBench(manager, httpPort, size));
    }

    log(`latency: ${REQUESTS} sequential requests per target, then wrk ${CONNECTIONS} connections for ${SECONDS}s`);
    const small = hostOf(0);
    await applyOrFail(manager, caddyConfig(proxyInput([route('only', small, {})])));
    await untilServed(httpPort, small, performance.now());
    const [seqDirect, seqSmall] = await sequential([{ port: directPort, host: null }, { port: httpPort, host: small }]);
    const wrkDirect = await concurrent(directPort, null);
    const wrkSmall = await concurrent(httpPort, small);

    const largest = Math.max(...SIZES);
    // Routes are in the order of their first host: the last host, with a chain of its own, comes last.
    const last = `zz-last.bench-${run}.test`;
    await applyOrFail(manager, caddyConfig(proxyInput(domains(largest, last, { upstream: names.lastUpstream }))));
    await untilServed(httpPort, last, performance.now());
    const [seqLarge] = await sequential([{ port: httpPort, host: last }]);
    const wrkLarge = await concurrent(httpPort, last);
    await applyOrFail(manager, caddyConfig(proxyInput(distinctDomains(largest, last))));
    await untilServed(httpPort, last, performance.now());
    const [seqDistinct] = await sequential([{ port: httpPort, host: last }]);
    const wrkDistinct = await concurrent(httpPort, last);

    const engine = await docker(['version', '--format', '{{.Server.Version}}']);
    const caddyVersion = await docker(['exec', names.container, 'caddy', 'version']).catch(() => '?');
    const fmt = (ms: number) => (ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0));
    const row = (...cells: string[]) => console.log(`${cells[0]!.padEnd(44)}${cells.slice(1).map((c) => c.padStart(14)).join('')}`);

    console.log();
    console.log(
      `Skiff proxy: caddy:2 (${caddyVersion.split(' ')[0]}) run by the agent's ProxyManager; ${cpus().length} cores, ` +
        `node ${process.version}, Docker Engine ${engine}`,
    );
    console.log(`Config change (one domain of N replaced), ${RUNS} runs per size after one warm-up; ms`);
    row('domains', ...applied.map((a) => String(a.size)));
    row('config JSON (kB)', ...applied.map((a) => a.configKb.toFixed(1)));
    for (const [label, key] of [['render (caddyConfig)', 'render'], ['load (apply until /load answered)', 'load'], ['apply start -> new host served', 'served']] as const) {
      row(`${label}, median`, ...applied.map((a) => fmt(percentile(a[key], 50))));
      row(`${label}, p95`, ...applied.map((a) => fmt(percentile(a[key], 95))));
    }

    console.log();
    console.log(
      `Requests to ${BACKENDS.label}: direct (host-mode published port) and through the proxy (Host header); ` +
        `sequential: ${REQUESTS} per target, one keep-alive client connection; wrk: ${CONNECTIONS} connections, ` +
        `${THREADS} threads, ${SECONDS}s after ${WARMUP}s warm-up`,
    );
    row('measure', 'direct', 'proxy (1)', 'ratio', `proxy (${largest})`, 'ratio');
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    const line = (label: string, d: Latency, s: Latency, l: Latency, key: 'p50' | 'p99' | 'rps') => {
      const value = (x: Latency) => (key === 'rps' ? x.rps.toFixed(0) : fmt(x[key]));
      row(label, value(d), value(s), ratio(s[key], d[key]), value(l), ratio(l[key], d[key]));
    };
    line('sequential p50 (ms)', seqDirect!, seqSmall!, seqLarge!, 'p50');
    line('sequential p99 (ms)', seqDirect!, seqSmall!, seqLarge!, 'p99');
    line('sequential req/s', seqDirect!, seqSmall!, seqLarge!, 'rps');
    row('sequential non-200', seqDirect!.errors, seqSmall!.errors, '', seqLarge!.errors, '');
    line(`wrk ${CONNECTIONS} conns p50 (ms)`, wrkDirect, wrkSmall, wrkLarge, 'p50');
    line(`wrk ${CONNECTIONS} conns p99 (ms)`, wrkDirect, wrkSmall, wrkLarge, 'p99');
    line(`wrk ${CONNECTIONS} conns req/s`, wrkDirect, wrkSmall, wrkLarge, 'rps');
    row('wrk errors (non-2xx/socket)', wrkDirect.errors, wrkSmall.errors, '', wrkLarge.errors, '');
    console.log(`(proxy (1): a config of 1 domain; proxy (${largest}): ${largest} domains, the host Caddy matches last)`);

    console.log();
    console.log(`Request rate with ${largest} domains as a fraction of 1 domain (target >= ${TARGET_RATIO.toFixed(2)}); the host Caddy tries last`);
    row('config', `sequential`, `wrk ${CONNECTIONS} conns`);
    const kept = (l: Latency, s: Latency) => {
      const r = l.rps / s.rps;
      return `${r.toFixed(2)} ${r >= TARGET_RATIO ? 'ok' : 'MISS'}`;
    };
    row(`${largest} domains, a few chains`, kept(seqLarge!, seqSmall!), kept(wrkLarge, wrkSmall));
    row(`${largest} domains, a chain each`, kept(seqDistinct!, seqSmall!), kept(wrkDistinct, wrkSmall));
    row('  a chain each: req/s, non-200', `${seqDistinct!.rps.toFixed(0)}, ${seqDistinct!.errors}`, `${wrkDistinct.rps.toFixed(0)}, ${wrkDistinct.errors}`);
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
