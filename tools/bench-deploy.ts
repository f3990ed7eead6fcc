/**
 * The deploy benchmark (issue 4, item 6; issue 15, section 3), run by tools/bench-deploy: the
 * time from `application.deploy` to the new version answering HTTP, against the same steps
 * done directly with the Docker CLI, for a cached image (busybox httpd) and for a small build
 * (git source + a Containerfile FROM busybox:latest); and the agent's resident memory idle.
 * For the cached image also: the floor (a plain `docker run` of the same image to its first
 * answer, same run), and Skiff's time broken into stages (stageTimes). Then redeploys behind
 * the proxy: 200 req/s through it during each one, and the errors they saw (redeployUnderLoad).
 *
 * Skiff runs as tools/up runs it (the bundles, the embedded database, NATS, the local agent),
 * through apps/control-plane/src/testing/process-stack.ts. Each run changes what the page
 * says, starts the clock, deploys, and stops it when the new text is served. Skiff and the
 * CLI take turns, one warm-up each first (it creates the service). Everything it creates
 * (services, images, directories, processes) is removed at the end, also after a failure.
 *
 *   BENCH_RUNS (7) measured runs per case, BENCH_BUILD (auto | off)
 */
import { execFile } from 'node:child_process';
import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_NETWORK } from '@skiff/domain';
import { type TestGitServer, freePort, startGitServer, waitFor } from '@skiff/testing';
import { type Deployment, type ProcessStack, dockerCommand, startProcessStack } from '../apps/control-plane/src/testing/process-stack.js';
import { settledRss } from './lib/process-memory.js';

const RUNS = positive(process.env.BENCH_RUNS ?? '7', 'BENCH_RUNS');
const BUILD = (process.env.BENCH_BUILD ?? 'auto') !== 'off';
const POLL_MS = 20;
const LOAD_RATE = 200;
const RUN_TIMEOUT_MS = 120_000;
const CONTAINERFILE = 'FROM busybox:latest\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n';
const SERVE = 'mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www';

function positive(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number from 1`);
  return n;
}

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const argvOf = (name: string) => process.env[name]?.split(' ').filter(Boolean);
const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function page(port: number): Promise<string | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
    return res.ok ? (await res.text()).trim() : null;
  } catch {
    return null;
  }
}

/** Milliseconds from now until `port` serves `text`. */
async function untilServed(started: number, port: number, text: string): Promise<number> {
  await waitFor(async () => (await page(port)) === text, { timeoutMs: RUN_TIMEOUT_MS, intervalMs: POLL_MS, what: `"${text}" on port ${port}` });
  return performance.now() - started;
}

/** The Docker CLI that matches the engine (Debian's), as the agent's builds use it. */
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const docker = (args: string[], env: NodeJS.ProcessEnv = process.env) => run(dockerCli, args, env);

function run(program: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(program, args, { env, timeout: RUN_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${program} ${args[0]} failed: ${String(stderr).trim() || err.message}`)) : resolve(String(stdout)),
    ),
  );
}

interface Case {
  skiff: number[];
  cli: number[];
  /** Skiff: from the deploy call until the deployment shows done. */
  done: number[];
  /** A plain `docker run` of the same image to its first answer (cached image only). */
  floor: number[];
  /** Skiff's runs broken into stages (cached image only). */
  stages: Stages[];
}

/** Milliseconds from the deploy call to each stage of one Skiff run (null when not seen). */
type Stages = Record<(typeof STAGES)[number], number | null>;
const STAGES = [
  'command queued (deployment row)',
  'agent received (deployment running)',
  'service updated (engine UpdateStatus.StartedAt)',
  'old task stopped (its container finished)',
  'new task created (task CreatedAt)',
  'new container started (State.StartedAt)',
  'new task running (task Status.Timestamp)',
  'new version answering (first HTTP answer)',
  'done recorded (deployment finishedAt)',
] as const;

/** Skiff's side of one run: deploy, time until served; then until the deployment is done. Answers the stages when `service` is named. */
async function skiffRun(s: ProcessStack, applicationId: string, port: number, text: string, into: Case | null, service?: string) {
  const wallStart = Date.now();
  const started = performance.now();
  const { deploymentId } = await s.ok('application.deploy', { applicationId });
  const served = await untilServed(started, port, text);
  const end = await s.deploymentEnd(applicationId, deploymentId, RUN_TIMEOUT_MS);
  const done = performance.now() - started;
  if (end.status !== 'done') throw new Error(`deployment ${deploymentId} ended ${end.status}: ${end.reason}`);
  if (into) {
    into.skiff.push(served);
    into.done.push(done);
    if (service) into.stages.push(await stageTimes(service, wallStart, served, end));
  }
}

/** Engine timestamps (nanosecond ISO) to epoch milliseconds; null for Go's zero time or nothing. */
function engineTime(text: string | undefined | null): number | null {
  if (!text || text.startsWith('0001-')) return null;
  const ms = Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(ms) ? null : ms;
}

interface EngineObject {
  CreatedAt?: string;
  Status?: { State?: string; Timestamp?: string; ContainerStatus?: { ContainerID?: string } };
  State?: { StartedAt?: string; FinishedAt?: string };
  UpdateStatus?: { StartedAt?: string };
}

async function inspect(kind: 'service' | 'task' | 'container', id: string): Promise<EngineObject | undefined> {
  const args = kind === 'service' ? ['service', 'inspect', id] : ['inspect', '--type', kind, id];
  return (JSON.parse(await docker(args)) as EngineObject[])[0];
}

/** Where one Skiff run's time went, from the records and the engine's own timestamps. */
async function stageTimes(service: string, wallStart: number, served: number, end: Deployment): Promise<Stages> {
  const since = (ms: number | null) => (ms === null ? null : ms - wallStart);
  const tasks = (await docker(['service', 'ps', service, '-q', '--no-trunc'])).split('\n').filter(Boolean);
  const [current, previous] = await Promise.all(tasks.slice(0, 2).map((id) => inspect('task', id)));
  const container = async (task: EngineObject | undefined) => {
    const id = task?.Status?.ContainerStatus?.ContainerID;
    return id ? inspect('container', id).catch(() => undefined) : undefined;
  };
  const [newContainer, oldContainer] = await Promise.all([container(current), container(previous)]);
  const svc = await inspect('service', service);
  return {
    'command queued (deployment row)': since(engineTime(end.createdAt)),
    'agent received (deployment running)': since(engineTime(end.startedAt)),
    'service updated (engine UpdateStatus.StartedAt)': since(engineTime(svc?.UpdateStatus?.StartedAt)),
    'old task stopped (its container finished)': since(engineTime(oldContainer?.State?.FinishedAt)),
    'new task created (task CreatedAt)': since(engineTime(current?.CreatedAt)),
    'new container started (State.StartedAt)': since(engineTime(newContainer?.State?.StartedAt)),
    'new task running (task Status.Timestamp)': current?.Status?.State === 'running' ? since(engineTime(current.Status.Timestamp)) : null,
    'new version answering (first HTTP answer)': served,
    'done recorded (deployment finishedAt)': since(engineTime(end.finishedAt)),
  };
}

/** The floor: a plain `docker run` of the same image and command, to its first answer. */
async function floorRun(name: string, port: number, text: string): Promise<number> {
  const started = performance.now();
  await docker(['run', '-d', '--rm', '--init', '--name', name, '-p', `127.0.0.1:${port}:8080`, '-e', `PAGE=${text}`, 'busybox:latest', 'sh', '-c', SERVE]);
  const ms = await untilServed(started, port, text);
  await docker(['rm', '-f', name]);
  return ms;
}

/** A busybox httpd served by Skiff and by a service made with the CLI, updated in turns. */
async function cachedImage(s: ProcessStack, leftovers: Leftovers): Promise<Case> {
  const result: Case = { skiff: [], cli: [], done: [], floor: [], stages: [] };
  const [skiffPort, cliPort, floorPort] = [await freePort(), await freePort(), await freePort()];
  const app = await s.containerApplication('bench-cached');
  const update = (text: string) =>
    s.ok('application.update', {
      applicationId: app.applicationId,
      command: 'sh',
      args: ['-c', SERVE],
      env: `PAGE=${text}`,
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: skiffPort, PublishMode: 'host' }] },
    });

  // The CLI service mirrors Skiff's spec: the platform network (created by Skiff's warm-up),
  // dnsrr, a host-mode port, init, stop-first updates with rollback.
  const cliName = `bench-cli-${s.run}`;
  leftovers.services.push(cliName);
  const cliUpdate = (text: string) =>
    docker(['service', 'update', '--detach', '--env-add', `PAGE=${text}`, '--force', cliName]);

  log('cached image: warm-up (creates both services)');
  await update('skiff-0');
  await skiffRun(s, app.applicationId, skiffPort, 'skiff-0', null);
  await docker([
    'service', 'create', '--detach', '--name', cliName, '--network', PLATFORM_NETWORK, '--endpoint-mode', 'dnsrr', '--init',
    '--publish', `mode=host,target=8080,published=${cliPort}`, '--update-order', 'stop-first',
    '--update-failure-action', 'rollback', '--env', 'PAGE=cli-0', 'busybox:latest', 'sh', '-c', SERVE,
  ]);
  await untilServed(performance.now(), cliPort, 'cli-0');

  for (let i = 1; i <= RUNS; i++) {
    log(`cached image: run ${i}/${RUNS}`);
    await update(`skiff-${i}`);
    await skiffRun(s, app.applicationId, skiffPort, `skiff-${i}`, result, app.appName);
    const started = performance.now();
    await cliUpdate(`cli-${i}`);
    result.cli.push(await untilServed(started, cliPort, `cli-${i}`));
    const floorName = `bench-floor-${s.run}-${i}`;
    leftovers.containers.push(floorName);
    result.floor.push(await floorRun(floorName, floorPort, `floor-${i}`));
  }
  return result;
}

/** A git repository with a Containerfile, deployed by Skiff and by clone + build + update with the CLI. */
async function smallBuild(s: ProcessStack, git: TestGitServer, leftovers: Leftovers): Promise<Case | string> {
  const result: Case = { skiff: [], cli: [], done: [], floor: [], stages: [] };
  const repo = await git.createRepo(`bench-${s.run}`, { Containerfile: CONTAINERFILE, 'index.html': 'build-0\n' });
  const [skiffPort, cliPort] = [await freePort(), await freePort()];
  const app = await s.ok('application.create', { name: 'bench-build', appName: `bench-build-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
  s.services.push(app.appName);
  leftovers.images.push(app.appName);
  await s.ok('application.saveGitProvider', {
    applicationId: app.applicationId,
    customGitUrl: repo.url,
    customGitBranch: 'main',
    customGitBuildPath: null,
    watchPaths: null,
  });
  await s.ok('application.saveBuildType', {
    applicationId: app.applicationId,
    buildType: 'containerfile',
    containerfile: 'Containerfile',
    containerContextPath: '.',
    containerBuildStage: null,
    legacyVersion: null,
    packTwoVersion: null,
  });
  await s.ok('application.update', {
    applicationId: app.applicationId,
    endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: skiffPort, PublishMode: 'host' }] },
  });
  const first = await s.call('application.deploy', { applicationId: app.applicationId });
  if (first.status !== 200) return `application.deploy refused a git source: ${JSON.stringify(first.body)}`;
  log('small build: warm-up (creates both services)');
  const firstEnd = await s.deploymentEnd(app.applicationId, first.body.deploymentId, RUN_TIMEOUT_MS);
  if (firstEnd.status !== 'done') return `the first build deploy ended ${firstEnd.status}: ${firstEnd.reason}`;
  await untilServed(performance.now(), skiffPort, 'build-0');

  // The CLI does what the agent does: a shallow clone, a BuildKit build, a service update.
  const cliName = `bench-cli-build-${s.run}`;
  const cliImage = `bench-cli-build-${s.run}`;
  leftovers.services.push(cliName);
  leftovers.images.push(cliImage);
  const work = await mkdtemp(join(tmpdir(), 'skiff-bench-build-'));
  leftovers.dirs.push(work);
  const buildEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), DOCKER_BUILDKIT: '1', GIT_TERMINAL_PROMPT: '0' };
  const cliBuild = async (tag: string) => {
    const dir = join(work, tag);
    await run('git', ['clone', '-q', '--depth', '1', '--branch', 'main', '--', repo.url, dir], buildEnv);
    await docker(['build', '-q', '-f', join(dir, 'Containerfile'), '-t', `${cliImage}:${tag}`, dir], buildEnv);
    await rm(dir, { recursive: true, force: true });
  };
  await cliBuild('0');
  await docker([
    'service', 'create', '--detach', '--name', cliName, '--network', PLATFORM_NETWORK, '--endpoint-mode', 'dnsrr', '--init',
    '--publish', `mode=host,target=8080,published=${cliPort}`, '--update-order', 'stop-first',
    '--update-failure-action', 'rollback', `${cliImage}:0`,
  ]);
  await untilServed(performance.now(), cliPort, 'build-0');

  for (let i = 1; i <= RUNS; i++) {
    log(`small build: run ${i}/${RUNS}`);
    await repo.commit({ 'index.html': `skiff-build-${i}\n` });
    await skiffRun(s, app.applicationId, skiffPort, `skiff-build-${i}`, result);
    await repo.commit({ 'index.html': `cli-build-${i}\n` });
    const started = performance.now();
    await cliBuild(String(i));
    await docker(['service', 'update', '--detach', '--image', `${cliImage}:${i}`, cliName]);
    result.cli.push(await untilServed(started, cliPort, `cli-build-${i}`));
  }
  return result;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 512 });

/** One GET through the proxy's HTTP port for `host`: its status and body, or status 0 and the error. */
function viaProxy(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: keepAlive, timeout: 30_000, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
      res.on('error', (err) => resolve({ status: 0, body: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
    req.end();
  });
}

interface LoadCase {
  runs: number;
  requests: number;
  /** Answers other than 200 with the page of a version deployed so far (connection errors included). */
  errors: number;
  examples: string[];
  /** Deploy call to the new version answering through the proxy, and to done. */
  served: number[];
  done: number[];
}

/**
 * Redeploys of an application behind the proxy (a domain, no host port: start-first) while
 * LOAD_RATE requests a second go through the proxy, from before each deploy until its done.
 */
async function redeployUnderLoad(s: ProcessStack): Promise<LoadCase> {
  const result: LoadCase = { runs: 0, requests: 0, errors: 0, examples: [], served: [], done: [] };
  const app = await s.containerApplication('bench-proxied');
  const host = `bench-proxied-${s.run}.skiff.test`;
  const update = (text: string) => s.ok('application.update', { applicationId: app.applicationId, command: 'sh', args: ['-c', SERVE], env: `PAGE=${text}` });
  await update('proxied-0');
  const first = await s.ok('application.deploy', { applicationId: app.applicationId });
  await s.deploymentEnd(app.applicationId, first.deploymentId, RUN_TIMEOUT_MS);
  await s.ok('domain.create', { host, path: '/', port: 8080, https: false, applicationId: app.applicationId, certificateType: 'none', domainType: 'application' });
  const port = s.ports.proxyHttp;
  await waitFor(async () => (await viaProxy(port, host)).body === 'proxied-0', { timeoutMs: 60_000, intervalMs: 100, what: `${host} through the proxy` });

  for (let i = 1; i <= RUNS; i++) {
    log(`redeploy behind the proxy under ${LOAD_RATE} req/s: run ${i}/${RUNS}`);
    // An older version may still answer: the engine stops a replaced task 2 s after the swap.
    const pages = new Set(Array.from({ length: i + 1 }, (_, n) => `proxied-${n}`));
    const pending = new Set<Promise<void>>();
    let servedAt: number | null = null;
    const timer = setInterval(() => {
      const p = viaProxy(port, host).then((a) => {
        result.requests++;
        if (a.status !== 200 || !pages.has(a.body)) {
          result.errors++;
          if (result.examples.length < 5) result.examples.push(`${a.status} ${a.body.slice(0, 80)}`);
        } else if (a.body === `proxied-${i}` && servedAt === null) servedAt = performance.now();
        pending.delete(p);
      });
      pending.add(p);
    }, 1000 / LOAD_RATE);
    await update(`proxied-${i}`);
    const started = performance.now();
    const { deploymentId } = await s.ok('application.deploy', { applicationId: app.applicationId });
    const end = await s.deploymentEnd(app.applicationId, deploymentId, RUN_TIMEOUT_MS);
    const done = performance.now() - started;
    await waitFor(async () => servedAt !== null, { timeoutMs: RUN_TIMEOUT_MS, intervalMs: POLL_MS, what: `proxied-${i} through the proxy` });
    clearInterval(timer);
    await Promise.all(pending);
    if (end.status !== 'done') throw new Error(`deployment ${deploymentId} ended ${end.status}: ${end.reason}`);
    result.runs++;
    result.served.push(servedAt! - started);
    result.done.push(done);
  }
  return result;
}

/** What the benchmark made outside the stack: CLI services, floor containers, image repositories (named with the run id), directories. */
interface Leftovers {
  services: string[];
  containers: string[];
  images: string[];
  dirs: string[];
}

/** Removes the leftovers once the stack (and its services) is gone: services, then their images once no container uses them. */
async function removeLeftovers(leftovers: Leftovers, skiffServices: string[]) {
  for (const name of leftovers.services) await dockerCommand(['service', 'rm', name]);
  for (const name of leftovers.containers) await dockerCommand(['rm', '-f', name]);
  const services = [...leftovers.services, ...skiffServices];
  await waitFor(
    async () => {
      for (const name of services) {
        if ((await dockerCommand(['ps', '-aq', '--filter', `label=com.docker.swarm.service.name=${name}`])).out !== '') return false;
      }
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the benchmark services to be gone' },
  ).catch((err: unknown) => log(String(err)));
  for (const repository of leftovers.images) {
    const refs = (await dockerCommand(['image', 'ls', '--filter', `reference=${repository}`, '--format', '{{.Repository}}:{{.Tag}}'])).out
      .split('\n')
      .filter((r) => r.startsWith(`${repository}:`));
    if (refs.length > 0) await dockerCommand(['image', 'rm', ...refs]);
  }
  for (const dir of leftovers.dirs) await rm(dir, { recursive: true, force: true });
}

async function main() {
  const leftovers: Leftovers = { services: [], containers: [], images: [], dirs: [] };
  let stack: ProcessStack | undefined;
  let git: TestGitServer | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      const skiffServices = stack ? [...stack.services] : [];
      await stack?.close().catch((err: unknown) => log(`stopping the stack: ${String(err)}`));
      await git?.stop().catch(() => {});
      await removeLeftovers(leftovers, skiffServices);
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  try {
    log('starting NATS, the control plane (embedded database) and the local agent');
    stack = await startProcessStack({
      label: `bench-${randomBytes(2).toString('hex')}`,
      controlPlaneArgv: argvOf('SKIFF_BENCH_CONTROL_PLANE_CMD'),
      agentArgv: argvOf('SKIFF_BENCH_AGENT_CMD'),
    });
    const agentPid = stack.agent.pid!;
    const idle = await settledRss(agentPid);

    const cached = await cachedImage(stack, leftovers);
    const proxied = await redeployUnderLoad(stack);
    let build: Case | string = 'BENCH_BUILD=off';
    if (BUILD) {
      git = await startGitServer();
      build = await smallBuild(stack, git, leftovers);
    }
    const after = await settledRss(agentPid);
    const engine = (await dockerCommand(['version', '--format', '{{.Server.Version}}'])).out;

    const row = (...cells: string[]) => console.log(`${cells[0]!.padEnd(62)}${cells.slice(1).map((c) => c.padStart(12)).join('')}`);
    const figures = (name: string, c: Case) => {
      for (const [label, p] of [['median', 50], ['p95', 95]] as const) {
        const skiff = percentile(c.skiff, p);
        const cli = percentile(c.cli, p);
        row(`${name}: deploy -> serving, ${label} (s)`, seconds(skiff), seconds(cli), (skiff / cli).toFixed(2));
      }
      row(`${name}: deploy -> record done, median (s)`, seconds(percentile(c.done, 50)), '', '');
    };
    console.log();
    console.log(
      `Skiff deploys: ${RUNS} runs per case after one warm-up, Skiff and the Docker CLI in turns; ` +
        `${cpus().length} cores, node ${process.version}, Docker Engine ${engine}; polling HTTP every ${POLL_MS} ms`,
    );
    row('measure', 'skiff', 'docker CLI', 'ratio');
    figures('cached image (busybox httpd)', cached);
    const floor = percentile(cached.floor, 50);
    row('cached image: plain docker run -> serving, median (s) [floor]', seconds(floor), '', (percentile(cached.skiff, 50) / floor).toFixed(2));
    console.log('cached image, where the time goes (median ms after the deploy call; Skiff runs):');
    for (const stage of STAGES) {
      const seen = cached.stages.map((st) => st[stage]).filter((v): v is number => v !== null);
      row(`  ${stage}`, seen.length > 0 ? String(Math.round(percentile(seen, 50))) : 'not seen', '', '');
    }
    if (typeof build === 'string') row('small build (git + Containerfile)', 'not measured', '', '');
    else figures('small build (git + Containerfile)', build);
    row(`redeploy behind the proxy: deploy -> serving, median (s)`, seconds(percentile(proxied.served, 50)), '', '');
    row(`redeploy behind the proxy: deploy -> record done, median (s)`, seconds(percentile(proxied.done, 50)), '', '');
    row(`redeploy behind the proxy at ${LOAD_RATE} req/s: errors`, String(proxied.errors), `of ${proxied.requests}`, '');
    if (proxied.examples.length > 0) console.log(`errors seen: ${proxied.examples.join('; ')}`);
    row('agent RSS idle after start (MB)', idle.toFixed(1), '', '');
    row('agent RSS idle after the runs (MB)', after.toFixed(1), '', '');
    console.log(
      '(record done: the deployment shows done: its new tasks ran for the 500 ms update monitor and the old ones are shutting down. ' +
        'The cached-image service publishes a host-mode port, so its updates are stop-first: the engine takes the old task out of ' +
        'DNS, waits 2 s before stopping it (its gossip delay), and only then starts the new one. That wait and the task start are ' +
        "Swarm's; behind the proxy the update is start-first and the old task serves meanwhile.)",
    );
    if (typeof build === 'string') console.log(`small build not measured: ${build}`);
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
