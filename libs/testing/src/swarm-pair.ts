/**
 * Two Docker Engines on this machine for a multi-node swarm test, each in a network namespace
 * of its own (so their swarm, data path and published ports collide neither with each other
 * nor with the machine's engine, which other tests share): `skc-m` (the manager, 10.199.91.2)
 * and `skc-w` (the worker to be, 10.199.91.3), linked by a veth pair. The host reaches the
 * manager over a second veth pair (host 10.199.92.1, manager 10.199.92.2), and the worker the
 * host through the manager, which routes: a test registry listening on the host's end is
 * reachable from both engines, which take it as an insecure registry. (A bridge on the host
 * would not do: the host engine's FORWARD policy drops bridged traffic.) The manager's swarm
 * is initialised here; the worker joins when the test says, as an operator runs a join
 * command on a new machine. Each engine gets its own data root, exec root, unix socket
 * (reachable from the host: unix sockets are not bound to a network namespace) and the
 * images given, loaded from the machine's engine. `stop()` removes all of it; a start first
 * removes what a crashed run left.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadImage } from './second-docker.js';
import { waitFor } from './wait-for.js';

const ROOT = process.env.SKIFF_TEST_SWARM_PAIR_DIR ?? '/tmp/skiff-swarm-pair';
/** The engines' link, and the host's link to the manager. */
const PAIR = '10.199.91';
const UPLINK = '10.199.92';
const HOST_DEVICE = 'skc-h';
const DOCKER_CLI = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

type Result = { ok: boolean; out: string; err: string };

export interface PairEngine {
  name: 'manager' | 'worker';
  /** Its address on the bridge (the swarm's advertise address). */
  address: string;
  socket: string;
  docker(args: string[], timeoutMs?: number): Promise<Result>;
}

export interface SwarmPair {
  manager: PairEngine;
  worker: PairEngine;
  /** The host's address both engines reach (for a registry). */
  hostAddress: string;
  stop(): Promise<void>;
}

function run(file: string, args: string[], timeoutMs = 60_000): Promise<Result> {
  return new Promise((resolve) =>
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ ok: !error, out: String(stdout).trim(), err: String(stderr).trim() }),
    ),
  );
}

async function must(file: string, args: string[]): Promise<void> {
  const res = await run(file, args, 20_000);
  if (!res.ok) throw new Error(`${file} ${args.join(' ')} failed: ${res.err}`);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops every dockerd or containerd whose command line names a path under the root. */
async function stopEngines(root: string): Promise<void> {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string[];
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (cmdline.some((a) => a.startsWith(`${root}/`)) && /dockerd|containerd/.test(cmdline[0] ?? '')) pids.push(pid);
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Gone already.
    }
  }
  await waitFor(() => pids.every((pid) => !alive(pid)), { timeoutMs: 30_000, intervalMs: 200, what: 'the pair engines to stop' }).catch(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone in between.
      }
    }
  });
}

async function removeRoot(root: string): Promise<void> {
  const mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && (m === root || m.startsWith(`${root}/`)))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await run('umount', ['-l', m], 10_000);
  rmSync(root, { recursive: true, force: true });
}

/** The namespaces and devices of this harness, whatever run made them. */
async function removeNetwork(): Promise<void> {
  const namespaces = (await run('ip', ['netns', 'list'])).out
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => /^skc-[mw]$/.test(name));
  for (const ns of namespaces) await run('ip', ['netns', 'delete', ns], 10_000);
  for (const device of [HOST_DEVICE]) {
    if (existsSync(`/sys/class/net/${device}`)) await run('ip', ['link', 'delete', device], 10_000);
  }
}

async function cleanUp(): Promise<void> {
  await stopEngines(ROOT);
  await removeRoot(ROOT);
  await removeNetwork();
}

async function ns(namespace: string, args: string[]): Promise<void> {
  await must('ip', ['-n', namespace, ...args]);
}

/** The namespaces, their link, the host's link to the manager and the routes through it. */
async function createNetwork(): Promise<void> {
  await must('ip', ['netns', 'add', 'skc-m']);
  await must('ip', ['netns', 'add', 'skc-w']);
  await must('ip', ['link', 'add', 'skc-pm', 'netns', 'skc-m', 'type', 'veth', 'peer', 'name', 'skc-pw', 'netns', 'skc-w']);
  await must('ip', ['link', 'add', HOST_DEVICE, 'type', 'veth', 'peer', 'name', 'skc-mh', 'netns', 'skc-m']);
  await must('ip', ['addr', 'add', `${UPLINK}.1/30`, 'dev', HOST_DEVICE]);
  await must('ip', ['link', 'set', HOST_DEVICE, 'up']);
  await must('ip', ['route', 'add', `${PAIR}.0/24`, 'via', `${UPLINK}.2`]);
  await ns('skc-m', ['addr', 'add', `${UPLINK}.2/30`, 'dev', 'skc-mh']);
  await ns('skc-m', ['addr', 'add', `${PAIR}.2/24`, 'dev', 'skc-pm']);
  await ns('skc-w', ['addr', 'add', `${PAIR}.3/24`, 'dev', 'skc-pw']);
  for (const [namespace, devices] of [['skc-m', ['lo', 'skc-mh', 'skc-pm']], ['skc-w', ['lo', 'skc-pw']]] as const) {
    for (const device of devices) await ns(namespace, ['link', 'set', device, 'up']);
  }
  await ns('skc-w', ['route', 'add', 'default', 'via', `${PAIR}.2`]);
  await must('ip', ['netns', 'exec', 'skc-m', 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
}

async function startEngine(name: 'manager' | 'worker', address: string, insecureRegistry: string): Promise<PairEngine> {
  const ns = `skc-${name[0]}`;
  const root = join(ROOT, name);
  const socket = join(root, 'docker.sock');
  mkdirSync(join(root, 'data'), { recursive: true, mode: 0o700 });
  mkdirSync(join(root, 'exec'), { recursive: true, mode: 0o700 });
  const log = openSync(join(root, 'dockerd.log'), 'a');
  // nsenter enters the network namespace only: `ip netns exec` would also remount /sys,
  // hiding the cgroup mounts dockerd needs.
  const dockerd = spawn(
    'nsenter',
    [
      `--net=/var/run/netns/${ns}`, 'dockerd',
      '--data-root', join(root, 'data'),
      '--exec-root', join(root, 'exec'),
      '-H', `unix://${socket}`,
      '--pidfile', join(root, 'docker.pid'),
      '--iptables=false',
      '--ip-masq=false',
      '--insecure-registry', insecureRegistry,
    ],
    { detached: true, stdio: ['ignore', log, log] },
  );
  dockerd.unref();
  const docker = (args: string[], timeoutMs?: number) => run(DOCKER_CLI, ['-H', `unix://${socket}`, ...args], timeoutMs);
  await waitFor(async () => {
    if (dockerd.exitCode !== null) throw new Error(`the ${name} dockerd exited`);
    return (await docker(['info', '--format', '{{.ID}}'], 5_000)).ok;
  }, {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `the ${name} dockerd to answer on ${socket}`,
  }).catch((err: Error) => {
    let tail = '';
    try {
      tail = readFileSync(join(root, 'dockerd.log'), 'utf8').slice(-1500);
    } catch {
      // No log yet.
    }
    throw new Error(`${err.message}; dockerd log: ${tail}`);
  });
  return { name, address, socket, docker };
}

export async function startSwarmPair(options: { images?: string[] } = {}): Promise<SwarmPair> {
  await cleanUp();
  const hostAddress = `${UPLINK}.1`;
  try {
    await createNetwork();
    const insecure = `${UPLINK}.0/30`;
    const manager = await startEngine('manager', `${PAIR}.2`, insecure);
    const worker = await startEngine('worker', `${PAIR}.3`, insecure);
    const init = await manager.docker(['swarm', 'init', '--advertise-addr', manager.address, '--listen-addr', `${manager.address}:2377`]);
    if (!init.ok) throw new Error(`swarm init on the manager failed: ${init.err}`);
    for (const image of options.images ?? ['busybox:latest']) {
      await loadImage(image, manager.socket);
      await loadImage(image, worker.socket);
    }
    return { manager, worker, hostAddress, stop: cleanUp };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
