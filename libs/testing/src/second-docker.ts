/**
 * A second Docker Engine on this machine, for tests of a second server (TEST-SERVICES.md "A
 * second server on the same machine"): its own data root, exec root (and so its own
 * containerd), socket and pidfile, no iptables rules, in a swarm of its own on
 * 127.0.0.1:2378 (data path port 4790, beside the first engine's 4789), with images loaded
 * from the first engine. One at a time per machine (the swarm port is fixed): a start first
 * stops what an earlier run that crashed left (its dockerd, mounts, directories, devices).
 *
 * Both engines share the host's network namespace, so the second one must not touch the
 * first one's Linux bridges. TEST-SERVICES.md's `--bridge none` does: dockerd then deletes
 * the host's `docker0` (the first engine's default bridge), and the swarm's gateway network
 * takes over and readdresses `docker_gwbridge`. Instead the second engine gets a default
 * bridge device of its own (`--bridge skiff2_br0`, created here) and a `docker_gwbridge`
 * network on a device of its own, each on a subnet of its own.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait-for.js';

const ROOT = process.env.SKIFF_TEST_SECOND_DOCKER_DIR ?? '/tmp/skiff-second-docker';
const SWARM_ADDR = '127.0.0.1:2378';
const DATA_PATH_PORT = '4790';
/**
 * Both engines share the host's network namespace. Left to itself, the second swarm would
 * take the Linux bridge `docker_gwbridge` of the first and readdress it (breaking the first
 * engine's published ports): its gateway bridge gets a device and a subnet of its own.
 */
const GWBRIDGE_DEVICE = 'skiff2_gwbridge';
const GWBRIDGE_SUBNET = process.env.SKIFF_TEST_SECOND_DOCKER_GWBRIDGE_SUBNET ?? '10.199.77.0/24';
/** The second engine's default bridge (in place of docker0), with its gateway address. */
const BRIDGE_DEVICE = 'skiff2_br0';
const BRIDGE_ADDRESS = process.env.SKIFF_TEST_SECOND_DOCKER_BRIDGE_ADDRESS ?? '10.199.78.1/24';
const DOCKER_CLI = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

export interface SecondDocker {
  /** The engine's unix socket (for SKIFF_DOCKER_SOCKET). */
  socket: string;
  /** Runs the docker CLI against this engine. */
  docker(args: string[], timeoutMs?: number): Promise<{ ok: boolean; out: string; err: string }>;
  /** Stops the engine and removes its directories. */
  stop(): Promise<void>;
}

const paths = (root: string) => ({
  root,
  data: join(root, 'data'),
  exec: join(root, 'exec'),
  socket: join(root, 'docker.sock'),
  pidfile: join(root, 'docker.pid'),
  log: join(root, 'dockerd.log'),
});

function run(file: string, args: string[], timeoutMs = 60_000): Promise<{ ok: boolean; out: string; err: string }> {
  return new Promise((resolve) =>
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ ok: !error, out: String(stdout).trim(), err: String(stderr).trim() }),
    ),
  );
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The dockerd a pidfile names, when it still runs with this data root (never another process). */
function recordedDockerd(p: ReturnType<typeof paths>): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(p.pidfile, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.some((a) => a.endsWith('dockerd')) && cmdline.includes(p.data) ? pid : null;
  } catch {
    return null;
  }
}

async function stopProcess(pid: number, graceMs: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  try {
    await waitFor(() => !alive(pid), { timeoutMs: graceMs, intervalMs: 100, what: `dockerd ${pid} to stop` });
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone in between.
    }
    await waitFor(() => !alive(pid), { timeoutMs: 10_000, intervalMs: 100, what: `dockerd ${pid} to die` });
  }
}

/**
 * Processes the engine started that outlived it (its containerd and container shims, after a
 * dockerd that was killed): every one names a path under the root on its command line.
 */
/** The second engine's bridge devices, left in the host's namespace when the engine stops. */
async function removeBridgeDevices(): Promise<void> {
  for (const device of [GWBRIDGE_DEVICE, BRIDGE_DEVICE]) {
    if (existsSync(`/sys/class/net/${device}`)) await run('ip', ['link', 'delete', device], 10_000);
  }
}

async function createDefaultBridge(): Promise<void> {
  for (const args of [
    ['link', 'add', BRIDGE_DEVICE, 'type', 'bridge'],
    ['addr', 'add', BRIDGE_ADDRESS, 'dev', BRIDGE_DEVICE],
    ['link', 'set', BRIDGE_DEVICE, 'up'],
  ]) {
    const res = await run('ip', args, 10_000);
    if (!res.ok) throw new Error(`ip ${args.join(' ')} failed: ${res.err}`);
  }
}

async function stopStragglers(root: string): Promise<void> {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string[];
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (cmdline.some((a) => a.startsWith(`${root}/`)) && /containerd|dockerd/.test(cmdline[0] ?? '')) await stopProcess(pid, 10_000);
  }
}

/** Unmounts what is still mounted under the root (deepest first), then removes it. */
async function removeRoot(root: string): Promise<void> {
  const mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && (m === root || m.startsWith(`${root}/`)))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await run('umount', ['-l', m], 10_000);
  rmSync(root, { recursive: true, force: true });
}

/** Copies an image from the first engine into the second (`docker save | docker -H … load`). */
export function loadImage(image: string, socket: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const save = spawn(DOCKER_CLI, ['save', image], { stdio: ['ignore', 'pipe', 'pipe'] });
    const load = spawn(DOCKER_CLI, ['-H', `unix://${socket}`, 'load', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let errors = '';
    save.stderr.on('data', (c: Buffer) => (errors += c.toString()));
    load.stderr.on('data', (c: Buffer) => (errors += c.toString()));
    save.stdout.pipe(load.stdin);
    const timer = setTimeout(() => {
      save.kill('SIGKILL');
      load.kill('SIGKILL');
    }, 120_000);
    let saved: number | null = null;
    save.on('close', (code) => (saved = code));
    load.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0 && saved === 0) resolve();
      else reject(new Error(`loading ${image} into the second engine failed: ${errors.trim() || `exit ${saved}/${code}`}`));
    });
  });
}

export async function startSecondDocker(options: { images?: string[] } = {}): Promise<SecondDocker> {
  const p = paths(ROOT);
  const leftover = recordedDockerd(p);
  if (leftover !== null) await stopProcess(leftover, 30_000);
  await stopStragglers(p.root);
  await removeRoot(p.root);
  await removeBridgeDevices();
  await createDefaultBridge();
  mkdirSync(p.data, { recursive: true, mode: 0o700 });
  mkdirSync(p.exec, { recursive: true, mode: 0o700 });

  const log = openSync(p.log, 'a');
  const dockerd = spawn(
    'dockerd',
    [
      '--data-root', p.data,
      '--exec-root', p.exec,
      '-H', `unix://${p.socket}`,
      '--pidfile', p.pidfile,
      '--bridge', BRIDGE_DEVICE,
      '--iptables=false',
      '--ip-masq=false',
    ],
    { detached: true, stdio: ['ignore', log, log] },
  );
  dockerd.unref();
  const docker = (args: string[], timeoutMs?: number) => run(DOCKER_CLI, ['-H', `unix://${p.socket}`, ...args], timeoutMs);
  const logTail = () => {
    try {
      return readFileSync(p.log, 'utf8').slice(-1500);
    } catch {
      return '';
    }
  };

  const stop = async () => {
    if (dockerd.pid && alive(dockerd.pid)) await stopProcess(dockerd.pid, 30_000);
    await stopStragglers(p.root);
    await removeRoot(p.root);
    await removeBridgeDevices();
  };

  try {
    await waitFor(async () => dockerd.exitCode === null && (await docker(['info', '--format', '{{.ID}}'], 5_000)).ok, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `the second dockerd to answer on ${p.socket}`,
    }).catch((err: Error) => {
      throw new Error(`${err.message}; dockerd log: ${logTail()}`);
    });
    const gwbridge = await docker([
      'network', 'create', '--driver', 'bridge', '--subnet', GWBRIDGE_SUBNET,
      '--opt', `com.docker.network.bridge.name=${GWBRIDGE_DEVICE}`,
      '--opt', 'com.docker.network.bridge.enable_icc=false',
      '--opt', 'com.docker.network.bridge.enable_ip_masquerade=false',
      'docker_gwbridge',
    ]);
    if (!gwbridge.ok) throw new Error(`creating the second engine's docker_gwbridge failed: ${gwbridge.err}`);
    const init = await docker(['swarm', 'init', '--listen-addr', SWARM_ADDR, '--advertise-addr', SWARM_ADDR, '--data-path-port', DATA_PATH_PORT]);
    if (!init.ok) throw new Error(`swarm init on the second engine failed: ${init.err}`);
    for (const image of options.images ?? ['busybox:latest']) await loadImage(image, p.socket);
  } catch (err) {
    await stop();
    throw err;
  }
  return { socket: p.socket, docker, stop };
}
