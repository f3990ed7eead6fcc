/**
 * The single host with every part in its own process, for tests that kill and restart them:
 * a nats-server with JetStream (its own port and store, which survive a restart), the
 * control plane (apps/control-plane/src/main.ts on an external Postgres database or the
 * embedded one in its data directory) and the local agent. The data directories, ports and
 * database stay the same across restarts, so `controlPlane.stop('SIGKILL')` followed by
 * `controlPlane.start()` is a crash and a reboot of the same installation.
 *
 * It does not depend on vitest: tools/bench-deploy.ts runs it against the bundles.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contractsByName } from '@skiff/contracts';
import { type DatabaseHandle, openDatabase } from '@skiff/db';
import { freePort, natsAnswers, natsServerBinary, spawnOwned, waitFor } from '@skiff/testing';
import type { Answer } from './harness.js';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const OUTPUT_KEPT = 200_000;

/** Runs the Docker CLI with an argument array; never throws. */
export const dockerCommand = (args: string[], timeoutMs = 120_000) =>
  new Promise<{ ok: boolean; out: string; err: string }>((resolve) =>
    execFile(dockerCli, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (e, stdout, stderr) =>
      resolve({ ok: !e, out: String(stdout).trim(), err: String(stderr).trim() }),
    ),
  );

/**
 * One program of the stack: started with an argument array and an explicit environment,
 * its output kept (the last 200 kB) for assertions and failure messages, stopped or killed
 * by its pid only.
 */
export class StackProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private text = '';
  private dropped = 0;

  constructor(
    readonly name: string,
    private readonly argv: () => string[],
    private readonly env: () => Record<string, string>,
    /** Resolves when the program started at output position `mark` is ready; rejects when it cannot be. */
    private readonly ready: (mark: number) => Promise<unknown>,
  ) {}

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything it printed (all runs), or what it printed since `mark()`. */
  output(since = 0): string {
    return this.text.slice(Math.max(0, since - this.dropped));
  }

  /** A position in the output, for `output(mark)` and `waitForOutput(…, mark)`. */
  mark(): number {
    return this.dropped + this.text.length;
  }

  tail(chars = 3000): string {
    return this.text.slice(-chars);
  }

  /** Starts it and waits until it is ready. */
  async start(): Promise<void> {
    const mark = this.spawn();
    await this.ready(mark);
  }

  private spawn(): number {
    if (this.running) throw new Error(`${this.name} is already running`);
    const mark = this.mark();
    const [program, ...args] = this.argv();
    const child = spawnOwned(program!, args, { cwd: repoRoot, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const keep = (chunk: string) => {
      this.text += chunk;
      if (this.text.length > OUTPUT_KEPT) {
        const cut = this.text.length - OUTPUT_KEPT;
        this.text = this.text.slice(cut);
        this.dropped += cut;
      }
    };
    child.stdout!.setEncoding('utf8').on('data', keep);
    child.stderr!.setEncoding('utf8').on('data', keep);
    return mark;
  }

  /** Sends `signal` and waits until it exited; SIGKILL after `graceMs` (SIGTERM only). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM', graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), signal === 'SIGKILL' ? 0 : graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Waits until the output since `since` contains `text`; fails early when the process exits. */
  async waitForOutput(text: string, since = 0, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      () => {
        if (this.output(since).includes(text)) return true;
        if (!this.running) throw new Error(`${this.name} exited: ${this.tail()}`);
        return false;
      },
      { timeoutMs, intervalMs: 100, what: () => `${this.name} to print "${text}" (output: ${this.tail()})` },
    );
  }
}

export interface Deployment {
  deploymentId: string;
  status: string;
  reason: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const ENDED = ['done', 'error', 'cancelled'];

export interface ProcessStackOptions {
  label: string;
  /** The control plane's database; without one it runs on the embedded database in its data directory. */
  databaseUrl?: string;
  /** argv of the control plane; default: main.ts through tsx. */
  controlPlaneArgv?: string[];
  /** argv of the agent; default: main.ts through tsx. */
  agentArgv?: string[];
  /** LOG_LEVEL of the control plane (default warn); the agent logs at info (its messages are waited for). */
  controlPlaneLogLevel?: string;
  /** More environment for the agent (e.g. SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS). */
  agentEnv?: Record<string, string>;
  /** More environment for the control plane (e.g. SKIFF_METRICS_ALERT_SECONDS). */
  controlPlaneEnv?: Record<string, string>;
  /** How long a start may take (control plane or agent). Default 90 s. */
  startTimeoutMs?: number;
}

/** Starts NATS, the control plane and the agent; answers the stack (call `close()` at the end). */
export async function startProcessStack(options: ProcessStackOptions) {
  const natsBinary = natsServerBinary();
  const run = randomBytes(3).toString('hex');
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const dirs = {
    controlPlane: mkdtempSync(join(tmpdir(), `skiff-ps-${options.label}-cp-`)),
    agent: mkdtempSync(join(tmpdir(), `skiff-ps-${options.label}-agent-`)),
    nats: mkdtempSync(join(tmpdir(), `skiff-ps-${options.label}-nats-`)),
  };
  // Kept for the stack's whole life: restarts listen on the same ports again.
  const ports = { api: await freePort(), grpc: await freePort(), nats: await freePort(), proxyHttp: await freePort(), proxyHttps: await freePort(), proxyDashboard: await freePort() };
  // This stack's own reverse proxy (stacks share the engine): removed by close().
  const proxyContainer = `skiff-proxy-ps-${run}`;
  const natsUrl = `nats://127.0.0.1:${ports.nats}`;
  const baseEnv = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env.HOME ?? '/root' };

  const apiBase = `http://127.0.0.1:${ports.api}`;
  const health = async () => {
    try {
      return (await fetch(`${apiBase}/health`, { signal: AbortSignal.timeout(2000) })).ok;
    } catch {
      return false;
    }
  };

  const nats: StackProcess = new StackProcess(
    'nats-server',
    () => [natsBinary, '-a', '127.0.0.1', '-p', String(ports.nats), '-js', '-sd', dirs.nats],
    () => baseEnv,
    () =>
      waitFor(
        async () => {
          if (!nats.running) throw new Error(`nats-server exited: ${nats.tail()}`);
          return natsAnswers(ports.nats);
        },
        { timeoutMs: 20_000, what: 'nats-server to answer' },
      ),
  );
  const controlPlane: StackProcess = new StackProcess(
    'control plane',
    () => options.controlPlaneArgv ?? [process.execPath, '--import', 'tsx', 'apps/control-plane/src/main.ts'],
    () => ({
      ...baseEnv,
      SKIFF_PORT: String(ports.api),
      SKIFF_HOST: '127.0.0.1',
      SKIFF_GRPC_PORT: String(ports.grpc),
      SKIFF_GRPC_HOST: '127.0.0.1',
      SKIFF_DATA_DIR: dirs.controlPlane,
      SKIFF_NATS_URL: natsUrl,
      // The test git server listens on loopback.
      SKIFF_OUTBOUND_ALLOW_PRIVATE: '1',
      LOG_LEVEL: options.controlPlaneLogLevel ?? 'warn',
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      ...options.controlPlaneEnv,
    }),
    () =>
      waitFor(
        async () => {
          if (!controlPlane.running) throw new Error(`the control plane exited: ${controlPlane.tail()}`);
          return existsSync(join(dirs.controlPlane, 'initial-api-key')) && (await health());
        },
        { timeoutMs: startTimeoutMs, intervalMs: 100, what: `the control plane to answer ${apiBase}/health` },
      ),
  );
  // Ready when it consumes its commands.
  const agent: StackProcess = new StackProcess(
    'agent',
    () => options.agentArgv ?? [process.execPath, '--import', 'tsx', 'apps/agent/src/main.ts'],
    () => ({
      ...baseEnv,
      SKIFF_SERVER_ID: 'local',
      SKIFF_NATS_URL: natsUrl,
      SKIFF_CONTROL_PLANE_GRPC: `127.0.0.1:${ports.grpc}`,
      SKIFF_AGENT_CREDENTIAL_FILE: join(dirs.controlPlane, 'local-agent.credential'),
      // The control plane made its CA at first boot and serves gRPC with TLS; NATS here is in clear on loopback.
      SKIFF_CA_FILE: join(dirs.controlPlane, 'tls', 'ca.pem'),
      // As tools/up: the public command key the control plane wrote beside the credential.
      SKIFF_COMMAND_KEY: readFileSync(join(dirs.controlPlane, 'command-key.pub'), 'utf8').trim(),
      SKIFF_AGENT_DATA_DIR: dirs.agent,
      // The tests read the journal's start and finish lines: compacted only long after.
      SKIFF_AGENT_JOURNAL_COMPACT_SECONDS: '3600',
      SKIFF_LOG_LEVEL: 'info',
      // Test stacks share this machine's engine: no build cap on its BuildKit cgroup (build/build-cap.ts).
      SKIFF_BUILD_CPUS: '0',
      SKIFF_BUILD_MEMORY: '0',
      SKIFF_PROXY_CONTAINER: proxyContainer,
      SKIFF_PROXY_HTTP_PORT: String(ports.proxyHttp),
      SKIFF_PROXY_HTTPS_PORT: String(ports.proxyHttps),
      SKIFF_PROXY_BIND: '127.0.0.1',
      SKIFF_PROXY_DASHBOARD_PORT: String(ports.proxyDashboard),
      SKIFF_PROXY_ISSUER: 'internal',
      ...options.agentEnv,
    }),
    (mark) => agent.waitForOutput('"msg":"consuming commands"', mark, startTimeoutMs),
  );

  let db: DatabaseHandle | undefined;
  const services: string[] = [];
  let key = '';
  try {
    await nats.start();
    await controlPlane.start();
    key = readFileSync(join(dirs.controlPlane, 'initial-api-key'), 'utf8').trim();
    await agent.start();
    if (options.databaseUrl) db = await openDatabase({ url: options.databaseUrl, poolSize: 2 });
  } catch (err) {
    await agent.stop('SIGKILL');
    await controlPlane.stop('SIGKILL');
    await nats.stop('SIGKILL');
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  /** Calls `/api/<operation>` over HTTP as a client would (GET input in the query string). */
  const call = async (operation: string, input: Record<string, unknown> = {}): Promise<Answer> => {
    const method = contractsByName.get(operation)?.method ?? 'POST';
    let url = `${apiBase}/api/${operation}`;
    const init: RequestInit = { method, headers: { 'x-api-key': key }, signal: AbortSignal.timeout(30_000) };
    if (method === 'GET') {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(input)) for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
      if ([...q].length > 0) url += `?${q}`;
    } else {
      init.headers = { 'x-api-key': key, 'content-type': 'application/json' };
      init.body = JSON.stringify(input);
    }
    const res = await fetch(url, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  /** Calls and expects 200; throws with the answer otherwise. */
  const ok = async (operation: string, input: Record<string, unknown> = {}) => {
    const res = await call(operation, input);
    if (res.status !== 200) throw new Error(`${operation} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };

  /** The application's deployments, newest first. */
  const deployments = async (applicationId: string) =>
    (await ok('deployment.all', { applicationId })) as Deployment[];

  /** Waits until the deployment has ended (done, error or cancelled); answers it. */
  const deploymentEnd = (applicationId: string, deploymentId: string, timeoutMs = 120_000) =>
    waitFor(
      async () => {
        const mine = (await deployments(applicationId)).find((d) => d.deploymentId === deploymentId);
        return mine && ENDED.includes(mine.status) ? mine : null;
      },
      { timeoutMs, intervalMs: 250, what: `deployment ${deploymentId} to end` },
    ).catch((err: unknown) => {
      // What both processes said by then, read at the timeout (not when the wait began).
      const state = `control plane ${controlPlane.running ? 'running' : 'exited'}: ${controlPlane.tail(3000)}\nagent ${agent.running ? 'running' : 'exited'}: ${agent.tail(3000)}`;
      throw new Error(`${(err as Error).message}\n${state}`, { cause: err });
    });

  const environmentId: string = (await ok('project.create', { name: `ps-${options.label}-${run}` })).environments[0].environmentId;

  return {
    run,
    ports,
    /** The agent's proxy container (listening on 127.0.0.1 ports.proxyHttp and ports.proxyHttps). */
    proxyContainer,
    dirs,
    natsUrl,
    apiBase,
    key,
    environmentId,
    nats,
    controlPlane,
    agent,
    /** The control plane's database (only with `databaseUrl`), for assertions. */
    get db() {
      if (!db) throw new Error('the stack runs on the embedded database: no direct access');
      return db.db;
    },
    call,
    ok,
    /** Swarm services removed by close(). */
    services,

    /** A container application named `<name>-<run>`, its service removed by close(). */
    async containerApplication(name: string, image = 'busybox:latest') {
      const app = await ok('application.create', { name, appName: `${name}-${run}`, environmentId, sourceType: 'container' });
      services.push(app.appName);
      await ok('application.saveContainerProvider', {
        applicationId: app.applicationId,
        containerImage: image,
        username: null,
        password: null,
        registryUrl: null,
      });
      return app as { applicationId: string; appName: string };
    },

    deployments,
    deploymentEnd,

    /** The agent's journal, one parsed object per line (see apps/agent/src/pipeline/journal.ts). */
    journal(): { op: string; id: string; attempts?: number; state?: string }[] {
      const file = join(dirs.agent, 'commands.jsonl');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return [];
          }
        });
    },

    async close() {
      await agent.stop('SIGTERM');
      await controlPlane.stop('SIGTERM');
      await nats.stop('SIGTERM');
      await db?.close();
      for (const name of services) await dockerCommand(['service', 'rm', name]);
      await dockerCommand(['rm', '-f', proxyContainer]);
      await dockerCommand(['volume', 'rm', `${proxyContainer}-data`]);
      for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type ProcessStack = Awaited<ReturnType<typeof startProcessStack>>;
