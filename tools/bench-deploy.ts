/**
 * The deploy benchmark (issue 4, item 6), run by tools/bench-deploy: the time from
 * `application.deploy` to the new version answering HTTP, against the same steps done
 * directly with the Docker CLI, for a cached image (busybox httpd) and for a small build
 * (git source + a Containerfile FROM busybox:latest); and the agent's resident memory idle.
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
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_NETWORK } from '@skiff/domain';
import { type TestGitServer, freePort, startGitServer, waitFor } from '@skiff/testing';
import { type ProcessStack, dockerCommand, startProcessStack } from '../apps/control-plane/src/testing/process-stack.js';
import { settledRss } from './lib/process-memory.js';

const RUNS = positive(process.env.BENCH_RUNS ?? '7', 'BENCH_RUNS');
const BUILD = (process.env.BENCH_BUILD ?? 'auto') !== 'off';
const POLL_MS = 20;
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
  /** Skiff: from the deploy call until the deployment shows done (it waits out the engine's monitor period). */
  done: number[];
}

/** Skiff's side of one run: deploy, time until served; then until the deployment is done. */
async function skiffRun(s: ProcessStack, applicationId: string, port: number, text: string, into: Case | null) {
  const started = performance.now();
  const { deploymentId } = await s.ok('application.deploy', { applicationId });
  const served = await untilServed(started, port, text);
  const end = await s.deploymentEnd(applicationId, deploymentId, RUN_TIMEOUT_MS);
  const done = performance.now() - started;
  if (end.status !== 'done') throw new Error(`deployment ${deploymentId} ended ${end.status}: ${end.reason}`);
  if (into) {
    into.skiff.push(served);
    into.done.push(done);
  }
}

/** A busybox httpd served by Skiff and by a service made with the CLI, updated in turns. */
async function cachedImage(s: ProcessStack, leftovers: Leftovers): Promise<Case> {
  const result: Case = { skiff: [], cli: [], done: [] };
  const [skiffPort, cliPort] = [await freePort(), await freePort()];
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
    await skiffRun(s, app.applicationId, skiffPort, `skiff-${i}`, result);
    const started = performance.now();
    await cliUpdate(`cli-${i}`);
    result.cli.push(await untilServed(started, cliPort, `cli-${i}`));
  }
  return result;
}

/** A git repository with a Containerfile, deployed by Skiff and by clone + build + update with the CLI. */
async function smallBuild(s: ProcessStack, git: TestGitServer, leftovers: Leftovers): Promise<Case | string> {
  const result: Case = { skiff: [], cli: [], done: [] };
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

/** What the benchmark made outside the stack: CLI services, image repositories (named with the run id), directories. */
interface Leftovers {
  services: string[];
  images: string[];
  dirs: string[];
}

/** Removes the leftovers once the stack (and its services) is gone: services, then their images once no container uses them. */
async function removeLeftovers(leftovers: Leftovers, skiffServices: string[]) {
  for (const name of leftovers.services) await dockerCommand(['service', 'rm', name]);
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
  const leftovers: Leftovers = { services: [], images: [], dirs: [] };
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
    if (typeof build === 'string') row('small build (git + Containerfile)', 'not measured', '', '');
    else figures('small build (git + Containerfile)', build);
    row('agent RSS idle after start (MB)', idle.toFixed(1), '', '');
    row('agent RSS idle after the runs (MB)', after.toFixed(1), '', '');
    console.log("(record done: the deployment shows done; the agent first waits out the engine's 5 s update monitor period)");
    if (typeof build === 'string') console.log(`small build not measured: ${build}`);
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
