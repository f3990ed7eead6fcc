import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';
import { spawnOwned } from './owned-process.js';

const PORT = Number(process.env.SKIFF_TEST_NATS_PORT ?? 14222);
const ROOT = process.env.SKIFF_TEST_NATS_DIR ?? '/tmp/skiff-test-nats';

/** The nats-server program (Debian's package or a release binary); throws when none is installed. */
export function natsServerBinary(): string {
  for (const p of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  throw new Error('nats-server not found: install the nats-server package (tools/test does)');
}

/** True when something on loopback `port` greets with the NATS protocol's INFO line. */
export function natsAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (chunk) => done(chunk.toString('utf8').startsWith('INFO ')));
  });
}

/** A test service the global setup made ready: its address, and how to stop it when this run started it. */
export interface TestService {
  url: string;
  /** Set when this run started it (or found its own leftover): the global teardown calls it. */
  stop?: () => Promise<void>;
}

/**
 * A NATS server with JetStream on loopback for the tests of one run, stopped by the global
 * teardown (and killed with the run's main process if that dies first). One already answering
 * on the port (another run's) is used as it is and left to its owner.
 * `SKIFF_TEST_NATS_URL` points the tests at another one.
 */
export async function ensureTestNats(): Promise<TestService> {
  if (process.env.SKIFF_TEST_NATS_URL) return { url: process.env.SKIFF_TEST_NATS_URL };
  const url = `nats://127.0.0.1:${PORT}`;
  if (await natsAnswers(PORT)) return { url };
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(join(ROOT, 'store'), { recursive: true });
  const log = openSync(join(ROOT, 'log'), 'a');
  const child = spawnOwned(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(PORT), '-js', '-sd', join(ROOT, 'store')], {
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(() => natsAnswers(PORT), { timeoutMs: 20_000, what: 'test NATS server to answer' });
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(ROOT, { recursive: true, force: true });
    },
  };
}

export interface DedicatedNats {
  url: string;
  /** With `auth`: the directory of tools/lib/nats-auth.mjs's files (account.nk, control-plane.creds). */
  authDir?: string;
  stop: () => Promise<void>;
}

/**
 * A nats-server with JetStream of one test file alone (its own port and store), for tests
 * whose subjects must not see other files' messages. `stop()` ends it and removes its store.
 * `auth: true` runs it in operator mode exactly as tools/up does (tools/lib/nats-auth.mjs);
 * `maxPayload` sets the server's max_payload (bytes; 1 MiB by default), for tests of messages
 * it refuses. `tls` makes it require TLS with that certificate (PEM files); its url is then `tls://…`.
 */
export async function startDedicatedNats(
  options: { auth?: boolean; maxPayload?: number; tls?: { certFile: string; keyFile: string } } = {},
): Promise<DedicatedNats> {
  const store = mkdtempSync(join(tmpdir(), 'skiff-nats-'));
  const port = await freePort();
  let args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store];
  let authDir: string | undefined;
  if (options.auth || options.maxPayload !== undefined || options.tls) {
    let conf = `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(store, 'js')}" }\n`;
    if (options.maxPayload !== undefined) conf += `max_payload: ${options.maxPayload}\n`;
    // As tools/up configures it: clients must speak TLS.
    if (options.tls) conf += `tls {\n  cert_file: "${options.tls.certFile}"\n  key_file: "${options.tls.keyFile}"\n}\n`;
    if (options.auth) {
      authDir = join(store, 'auth');
      await runNatsAuthSetup(authDir);
      conf += 'include ./auth/auth.conf\n';
    }
    writeFileSync(join(store, 'server.conf'), conf);
    args = ['-c', join(store, 'server.conf')];
  }
  const child = spawnOwned(natsServerBinary(), args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      return natsAnswers(port);
    },
    { timeoutMs: 20_000, what: 'a dedicated NATS server to answer' },
  );
  return {
    url: `${options.tls ? 'tls' : 'nats'}://127.0.0.1:${port}`,
    ...(authDir ? { authDir } : {}),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(store, { recursive: true, force: true });
    },
  };
}

/** Runs tools/lib/nats-auth.mjs, the setup tools/up uses, into `dir`. */
async function runNatsAuthSetup(dir: string): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const script = fileURLToPath(new URL('../../../tools/lib/nats-auth.mjs', import.meta.url));
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, [script, dir], { timeout: 30_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`nats-auth.mjs failed: ${stderr || err.message}`)) : resolve(),
    ),
  );
}

/**
 * A nats-server with JetStream of one test alone that the test stops and starts again (its
 * port and store stay), for tests of what happens while NATS is down. `remove()` stops it and
 * deletes its store; call it in afterAll.
 */
export class RestartableNats {
  private child: ReturnType<typeof spawnOwned> | undefined;
  readonly store = mkdtempSync(join(tmpdir(), 'skiff-nats-'));
  private constructor(readonly port: number) {}

  /** On `port` (a free one by default), not started yet. */
  static async create(port?: number): Promise<RestartableNats> {
    return new RestartableNats(port ?? (await freePort()));
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawnOwned(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.store], { stdio: 'ignore' });
    this.child = child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
        return natsAnswers(this.port);
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the test nats-server to answer' },
    );
  }

  /** Stops it (SIGKILL: as if it crashed), keeping its store for the next start. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.store, { recursive: true, force: true });
  }
}
