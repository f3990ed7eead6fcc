/**
 * A private container registry for one test file: Debian's `docker-registry` (distribution
 * 2.8) on a free loopback port, with its own storage directory and an htpasswd file (bcrypt,
 * the only hash it takes) holding one user with a random password. Loopback registries need
 * no insecure-registry setting in the engine. tools/test installs the packages
 * (`ensure_registry_packages` in tools/lib/services.sh).
 *
 * The password never appears in a command line or a log: htpasswd and `docker login` read it
 * from standard input, and the login lives in a throw-away DOCKER_CONFIG directory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';
import { spawnOwned } from './owned-process.js';

export interface TestRegistry {
  /** `127.0.0.1:<port>`: the registry part of image references. */
  address: string;
  username: string;
  /** A secret: never log it. */
  password: string;
  /**
   * Copies a local image into the registry as `<address>/<name>` (e.g. `skiff-e2e/web:abc`)
   * and answers that reference. The local tag is removed afterwards, so a deploy of it must
   * pull it from the registry.
   */
  push(localImage: string, name: string): Promise<string>;
  /** Removes the engine's local copies of what was pushed (pulled by deploys) and `ref`s given. */
  removeLocalImages(...refs: string[]): Promise<void>;
  /** Stops the registry, removes its storage and the local copies of what was pushed. */
  stop(): Promise<void>;
}

const STEP_TIMEOUT_MS = 60_000;

function binary(name: string, paths: string[]): string {
  const found = paths.find((p) => existsSync(p));
  if (!found) throw new Error(`${name} not found: install the docker-registry and apache2-utils packages (tools/test does)`);
  return found;
}

/** The docker CLI of Debian's docker.io (matching the engine) when there is one. */
const dockerCli = () => (existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker');

/** Runs a program (no shell), optionally feeding it `input`; rejects with its stderr (never with `input`). */
function runProgram(
  file: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { env: options.env ?? process.env, timeout: options.timeoutMs ?? STEP_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${file} ${args[0] ?? ''} failed: ${String(stderr).trim() || err.message}`));
        else resolve(String(stdout));
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

/** The registry answers its API root; 401 means it is up and asks for the login. */
async function answers(address: string): Promise<boolean> {
  try {
    const res = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(2_000) });
    return res.status === 401;
  } catch {
    return false;
  }
}

/**
 * `host`: the address it listens on, default 127.0.0.1; another one (e.g. a bridge the
 * engines of a test swarm reach, swarm-pair.ts) needs those engines to list it as an insecure
 * registry.
 */
export async function startTestRegistry(options: { host?: string } = {}): Promise<TestRegistry> {
  const registryBin = binary('docker-registry', ['/usr/bin/docker-registry', '/usr/local/bin/docker-registry']);
  const htpasswd = binary('htpasswd', ['/usr/bin/htpasswd', '/usr/local/bin/htpasswd']);
  const dir = await mkdtemp(join(tmpdir(), 'skiff-registry-'));
  const username = `skiff-${randomBytes(3).toString('hex')}`;
  const password = randomBytes(18).toString('base64url');
  try {
    const entry = await runProgram(htpasswd, ['-B', '-i', '-n', username], { input: password });
    await writeFile(join(dir, 'htpasswd'), entry, { mode: 0o600 });
    return await launch(registryBin, dir, username, password, options.host ?? '127.0.0.1');
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function launch(registryBin: string, dir: string, username: string, password: string, host: string): Promise<TestRegistry> {
  // A port found free may be taken before the registry binds it: try another then.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const address = `${host}:${await freePort()}`;
    // YAML takes JSON as it is.
    const config = {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: join(dir, 'data') }, delete: { enabled: true } },
      http: { addr: address, secret: randomBytes(16).toString('hex') },
      auth: { htpasswd: { realm: 'skiff-test', path: join(dir, 'htpasswd') } },
    };
    const configFile = join(dir, 'config.yml');
    await writeFile(configFile, JSON.stringify(config));
    const child = spawnOwned(registryBin, ['serve', configFile], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}: ${output.trim()}`);
          return answers(address);
        },
        { timeoutMs: 20_000, intervalMs: 100, what: `the test registry on ${address} to answer` },
      );
    } catch (err) {
      lastError = err;
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      continue;
    }
    const stopProcess = async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    };
    return registryHandle({ address, username, password, dir, stopProcess });
  }
  throw lastError;
}

function registryHandle(r: {
  address: string;
  username: string;
  password: string;
  dir: string;
  stopProcess: () => Promise<void>;
}): TestRegistry {
  const pushed = new Set<string>();
  const docker = dockerCli();
  const removeLocalImages = async (...refs: string[]) => {
    for (const ref of [...pushed, ...refs]) {
      // Absent already is fine; the tag only (a deploy's service is gone by now).
      await runProgram(docker, ['image', 'rm', ref]).catch(() => undefined);
    }
  };
  return {
    address: r.address,
    username: r.username,
    password: r.password,
    async push(localImage, name) {
      const ref = `${r.address}/${name}`;
      pushed.add(ref);
      // The login goes to a config directory of this push alone, never to the user's.
      const config = await mkdtemp(join(tmpdir(), 'skiff-docker-config-'));
      const env = { ...process.env, DOCKER_CONFIG: config };
      try {
        await runProgram(docker, ['tag', localImage, ref]);
        await runProgram(docker, ['login', '--username', r.username, '--password-stdin', r.address], { input: r.password, env });
        await runProgram(docker, ['push', ref], { env, timeoutMs: 120_000 });
        await runProgram(docker, ['image', 'rm', ref]);
      } finally {
        await runProgram(docker, ['logout', r.address], { env }).catch(() => undefined);
        await rm(config, { recursive: true, force: true });
      }
      return ref;
    },
    removeLocalImages,
    async stop() {
      await removeLocalImages();
      await r.stopProcess();
      await rm(r.dir, { recursive: true, force: true });
    },
  };
}
