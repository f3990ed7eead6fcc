// Compose stacks through the whole agent: DeployCompose and the workload commands of kind
// COMPOSE published on the test NATS server's JetStream, run against the real engine with the
// machine's real Compose program (Debian's docker-compose v1 here) and `docker stack deploy`,
// reported to an in-test gRPC server. Stacks publish host ports on loopback (Swarm stacks:
// host-mode ports and dnsrr endpoints, the routing mesh is missing here).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CANCEL_REASON, KILL_BUILD_REASON, formatComposeDotenv } from '@skiff/domain';
import {
  CommandKind,
  CommandStatus,
  ComposeType,
  ControlReply,
  ControlRequest,
  DeploymentStatus,
  WorkloadKind,
  timestampFromDate,
  type Command,
  type CommandResult,
  type ComposeConversion,
  type GitSource,
} from '@skiff/proto';
import { freePort, startGitServer, type TestGitServer } from '@skiff/testing';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent } from '../agent.js';
import { dockerCliOf } from '../build/settings.js';
import { CommandJournal } from '../pipeline/journal.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { ReportClient } from '../reports/client.js';
import { ensureCommandStream, publishCommand, removeServerChannel, requestControl } from '../testing/nats.js';
import { startReportServer, type RecordingReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';
import { detectComposeProgram, type ComposeProgramChoice } from './program.js';

/** The test git servers listen on loopback: the operator's allowance (SKIFF_OUTBOUND_ALLOW_PRIVATE=1). */
const LOOPBACK_ALLOWED = { allowPrivate: true };

const run = randomBytes(3).toString('hex');
const serverId = `t-cmp-${run}`;
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const dockerCli = dockerCliOf(null);
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', DOCKER_HOST: 'unix:///var/run/docker.sock' };

let nc: NatsConnection;
let reportServer: RecordingReportServer;
let dataDir: string;
let journal: CommandJournal;
let reports: ReportClient;
let agent: Agent;
let program: ComposeProgramChoice;
let git: TestGitServer;
let redisImage = 'redis:8';
const stacks = new Set<string>();
let counter = 0;

beforeAll(async () => {
  await docker.ping();
  nc = await connect({ servers: inject('natsUrl') });
  await ensureCommandStream(nc);
  reportServer = await startReportServer();
  git = await startGitServer();
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-compose-'));
  program = await detectComposeProgram({ dockerCli, configured: null, env });
  if (!program.program) throw new Error(`these tests need a Compose program: ${program.missing}`);
  // The test setup builds redis:8 (tools/lib/services.sh); busybox stands in where it is missing.
  redisImage = (await docker.getImage('redis:8').inspect().then(() => true, () => false)) ? 'redis:8' : 'busybox:latest';
  ({ agent, journal, reports } = await startTestAgent({
    serverId,
    nc,
    driver: new DockerodeDriver({ docker }),
    journalDir: dataDir,
    reportTarget: reportServer.target,
    credential: 'cmp',
    log,
    maxConcurrentDeploys: 2,
    workload: { pollIntervalMs: 200, settleMs: 1_000, waitTimeoutMs: 120_000 },
    compose: { dataDir, dockerCli, dockerSocket: '/var/run/docker.sock', program, timeoutMs: 180_000, pollIntervalMs: 200, settleMs: 1_000 },
  }));
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await reports?.flush(5_000);
  reports?.close();
  await journal?.close();
  const problems: string[] = [];
  for (const name of stacks) {
    // What a failed test left: the project's or stack's objects, by their labels.
    await cli(['stack', 'rm', name]);
    for (const label of [`com.docker.compose.project=${name}`, `com.docker.stack.namespace=${name}`]) {
      const containers = await cli(['ps', '-aq', '--filter', `label=${label}`]);
      if (containers.trim()) await cli(['rm', '-f', '-v', ...containers.split(/\s+/).filter(Boolean)]);
    }
    await waitUntil(`the containers of ${name} gone`, async () => (await cli(['ps', '-aq', '--filter', `label=com.docker.stack.namespace=${name}`])).trim() === '', 60_000, 500).catch(
      (err: unknown) => problems.push(String(err)),
    );
    for (const kind of ['network', 'volume'] as const) {
      for (const label of [`com.docker.compose.project=${name}`, `com.docker.stack.namespace=${name}`]) {
        const names = (await cli([kind, 'ls', '-q', '--filter', `label=${label}`])).split(/\s+/).filter(Boolean);
        if (names.length) await cli([kind, 'rm', ...names]);
      }
    }
    await cli(['network', 'rm', name]);
  }
  await removeServerChannel(nc, serverId).catch((err: unknown) => problems.push(String(err)));
  await nc?.close();
  await reportServer?.stop();
  await git?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  if (problems.length) throw new Error(`clean-up problems:\n${problems.join('\n')}`);
}, 180_000);

/** The docker CLI's output (errors swallowed: for clean-up and looks). */
function cli(args: string[]): Promise<string> {
  return new Promise((resolve) => execFile(dockerCli, args, { env }, (_err, out) => resolve(String(out))));
}

function stackName(tag: string): string {
  const name = `skt-cmp-${run}-${tag}`;
  stacks.add(name);
  return name;
}

interface DeployOptions {
  type?: ComposeType;
  env?: Record<string, string>;
  conversion?: Partial<ComposeConversion>;
  command?: string[];
  git?: GitSource;
  composePath?: string;
  configFiles?: { path: string; content: string }[];
}

function deployCommand(appName: string, text: string, options: DeployOptions = {}): Command {
  const n = ++counter;
  return {
    commandId: `cmd-${run}-${n}`,
    serverId,
    kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE,
    workloadKey: `compose:${appName}`,
    deadline: timestampFromDate(new Date(Date.now() + 300_000)),
    createdAt: timestampFromDate(new Date()),
    payload: {
      $case: 'deployCompose',
      value: {
        deploymentId: `dep-${run}-${n}`,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: `id-${appName}`, appName },
        composeType: options.type ?? ComposeType.COMPOSE_TYPE_CONTAINER_COMPOSE,
        composeText: options.git ? '' : text,
        source: options.git ? { kind: { $case: 'git', value: options.git } } : undefined,
        composePath: options.composePath ?? '',
        conversion: { randomize: false, suffix: '', isolated: false, isolatedVolumes: false, routedServices: [], ...options.conversion },
        envFile: formatComposeDotenv(new Map(Object.entries(options.env ?? {}))),
        configFiles: (options.configFiles ?? []).map((f) => ({ ...f, target: '' })),
        command: options.command ?? [],
        allowHostPrivileges: false,
        forbiddenHostPorts: [],
        maxHostPorts: 0,
      },
    },
  };
}

type Operation = 'stopWorkload' | 'startWorkload' | 'reloadWorkload' | 'removeWorkload';
const KINDS: Record<Operation, CommandKind> = {
  stopWorkload: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
  startWorkload: CommandKind.COMMAND_KIND_START_WORKLOAD,
  reloadWorkload: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD,
  removeWorkload: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD,
};

function workloadCommand(op: Operation, appName: string, removeVolumes = false): Command {
  const workload = { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: `id-${appName}`, appName };
  const payload = (
    op === 'removeWorkload' ? { $case: op, value: { workload, removeVolumes } } : { $case: op, value: { workload } }
  ) as Command['payload'];
  return {
    commandId: `cmd-${run}-${++counter}`,
    serverId,
    kind: KINDS[op],
    workloadKey: `compose:${appName}`,
    deadline: timestampFromDate(new Date(Date.now() + 300_000)),
    createdAt: timestampFromDate(new Date()),
    payload,
  };
}

const resultOf = (commandId: string): CommandResult | undefined => reportServer.results.find((r) => r.commandId === commandId);
const deploymentOf = (c: Command) => (c.payload?.$case === 'deployCompose' ? c.payload.value.deploymentId : '');
const logOf = (c: Command) => reportServer.eventsOf(deploymentOf(c)).flatMap((e) => e.logLines.map((l) => l.text));

/** Publishes the command and answers its result. */
async function send(command: Command, timeoutMs = 180_000): Promise<CommandResult> {
  await publishCommand(nc, command);
  return waitUntil(`the result of ${command.commandId}`, () => resultOf(command.commandId), timeoutMs, 200);
}

async function expectSucceeded(command: Command, timeoutMs?: number): Promise<void> {
  const result = await send(command, timeoutMs);
  expect({ status: result.status, reason: result.reason, log: result.status === CommandStatus.COMMAND_STATUS_SUCCEEDED ? [] : logOf(command) }).toEqual({
    status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
    reason: '',
    log: [],
  });
}

async function get(port: number, path: string): Promise<string | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
    return response.ok ? (await response.text()).trim() : null;
  } catch {
    return null;
  }
}

/** Containers of a Compose project (running or not), with their service. */
async function projectContainers(project: string) {
  const list = await docker.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${project}`] } });
  return list.map((c) => ({ id: c.Id, service: c.Labels['com.docker.compose.service'], state: c.State, labels: c.Labels }));
}

async function execIn(containerId: string, cmd: string[]): Promise<string> {
  const exec = await docker.getContainer(containerId).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  // Multiplexed frames: an 8-byte header before each chunk of output.
  const out: Buffer[] = [];
  const all = Buffer.concat(chunks);
  for (let at = 0; at + 8 <= all.length; ) {
    const size = all.readUInt32BE(at + 4);
    out.push(all.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return Buffer.concat(out).toString().trim();
}

const volumeNames = async () => ((await docker.listVolumes()).Volumes ?? []).map((v) => v.Name);
const exists = (path: string) => stat(path).then(() => true, () => false);
const stackDir = (appName: string) => join(dataDir, 'compose', appName);

/** A web service answering the files of /www, with a token made once and kept in both a bind mount and a named volume. */
const WEB_COMMAND =
  '["sh", "-c", "mkdir -p /www && ([ -f /data/token ] || cat /proc/sys/kernel/random/uuid > /data/token) && ([ -f /www/token ] || cp /data/token /www/token) && cp /data/token /www/volume && echo $$VERSION > /www/version && exec httpd -f -p 8080 -h /www"]';

const redisService = (extra = '') => `  cache:
    image: ${redisImage}
${redisImage === 'redis:8' ? '    command: ["redis-server", "--dir", "/data", "--protected-mode", "no"]\n' : '    command: ["sleep", "3600"]\n    init: true\n'}    volumes:
      - cache:/data
${extra}`;

const TWO_SERVICES = () => `services:
  web:
    image: busybox:latest
    init: true
    command: ${WEB_COMMAND}
    environment:
      VERSION: \${VERSION}
    ports:
      - "127.0.0.1:\${WEB_PORT}:8080"
    volumes:
      - ./www:/www
      - data:/data
${redisService()}volumes:
  data:
  cache:
`;

describe('a Compose project (container-compose)', { timeout: 240_000 }, () => {
  const app = stackName('proj');
  let port: number;
  let token: string;

  it('deploys a web service and a Redis from raw YAML, reached on its published port', async () => {
    port = await freePort();
    const deploy = deployCommand(app, TWO_SERVICES(), { env: { WEB_PORT: String(port), VERSION: '1', SECRET: 'never-in-the-log-xyz' } });
    await expectSucceeded(deploy);
    token = await waitUntil('the token', () => get(port, '/token'), 30_000, 200);
    expect(await get(port, '/volume')).toBe(token);
    expect(await get(port, '/version')).toBe('1');
    const events = reportServer.eventsOf(deploymentOf(deploy));
    expect(events[0]?.status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_RUNNING);
    expect(events.at(-1)?.status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    expect(logOf(deploy)).toContain(`Running ${program.program!.name} up -d --build --remove-orphans for project ${app}`);
    expect(logOf(deploy).join('\n')).not.toContain('never-in-the-log-xyz');

    const containers = await projectContainers(app);
    expect(containers.map((c) => [c.service, c.state, c.labels['skiff.kind'], c.labels['skiff.id']]).sort()).toEqual([
      ['cache', 'running', 'compose', `id-${app}`],
      ['web', 'running', 'compose', `id-${app}`],
    ]);
    const envFile = join(stackDir(app), 'code', '.env');
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
    expect(await readFile(join(stackDir(app), 'files', 'www', 'token'), 'utf8')).toBe(`${token}\n`);
    if (redisImage === 'redis:8') {
      const cache = containers.find((c) => c.service === 'cache')!;
      expect(await execIn(cache.id, ['redis-cli', 'SET', 'kept', 'yes'])).toBe('OK');
      expect(await execIn(cache.id, ['redis-cli', 'SAVE'])).toBe('OK');
    }
  });

  it('redeploys with new settings: the containers are recreated, the named volume and the bind-mounted files kept', async () => {
    const before = await projectContainers(app);
    const deploy = deployCommand(app, TWO_SERVICES(), { env: { WEB_PORT: String(port), VERSION: '2' } });
    await expectSucceeded(deploy);
    await waitUntil('version 2', async () => (await get(port, '/version')) === '2', 30_000, 200);
    expect(await get(port, '/token')).toBe(token);
    expect(await get(port, '/volume')).toBe(token);
    const after = await projectContainers(app);
    const web = (list: typeof after) => list.find((c) => c.service === 'web')!.id;
    expect(web(after)).not.toBe(web(before));
    if (redisImage === 'redis:8') {
      const cache = after.find((c) => c.service === 'cache')!;
      expect(await execIn(cache.id, ['redis-cli', 'GET', 'kept'])).toBe('yes');
    }
  });

  it('stops, starts and reloads the stack', async () => {
    await expectSucceeded(workloadCommand('stopWorkload', app));
    expect((await projectContainers(app)).map((c) => c.state)).toEqual(['exited', 'exited']);
    expect(await get(port, '/token')).toBeNull();
    // Stopping again changes nothing; a reload keeps it stopped.
    await expectSucceeded(workloadCommand('stopWorkload', app));
    await expectSucceeded(workloadCommand('reloadWorkload', app));
    expect((await projectContainers(app)).every((c) => c.state === 'exited')).toBe(true);

    await expectSucceeded(workloadCommand('startWorkload', app));
    expect(await waitUntil('the web after start', () => get(port, '/token'), 30_000, 200)).toBe(token);
    const started = async () => (await docker.getContainer((await projectContainers(app)).find((c) => c.service === 'web')!.id).inspect()).State.StartedAt;
    const before = await started();
    await expectSucceeded(workloadCommand('reloadWorkload', app));
    expect(await started()).not.toBe(before);
    expect(await waitUntil('the web after reload', () => get(port, '/token'), 30_000, 200)).toBe(token);
  });

  it('removes the stack and keeps its volumes and files, which a new deploy finds again', async () => {
    await expectSucceeded(workloadCommand('removeWorkload', app));
    expect(await projectContainers(app)).toEqual([]);
    expect(await volumeNames()).toEqual(expect.arrayContaining([`${app}_data`, `${app}_cache`]));
    expect(await readdir(stackDir(app))).toEqual(['files']);
    // Removing it again succeeds.
    await expectSucceeded(workloadCommand('removeWorkload', app));

    await expectSucceeded(deployCommand(app, TWO_SERVICES(), { env: { WEB_PORT: String(port), VERSION: '3' } }));
    expect(await waitUntil('the token after a new deploy', () => get(port, '/token'), 30_000, 200)).toBe(token);
    expect(await get(port, '/volume')).toBe(token);
  });

  it('removes the stack with its volumes and directory', async () => {
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
    expect(await projectContainers(app)).toEqual([]);
    expect((await volumeNames()).filter((v) => v.startsWith(`${app}_`))).toEqual([]);
    expect(await exists(stackDir(app))).toBe(false);
    const networks = await docker.listNetworks({ filters: { label: [`com.docker.compose.project=${app}`] } });
    expect(networks).toEqual([]);
  });
});

describe('config files beside the compose file', { timeout: 240_000 }, () => {
  it('writes them where the relative bind mounts find them, rewritten at each deploy; a path leaving the folder fails the deploy', async () => {
    const app = stackName('conf');
    const file = 'services:\n  app:\n    image: busybox:latest\n    init: true\n    command: ["sleep", "3600"]\n    volumes:\n      - ./conf/motd.txt:/motd.txt:ro\n';
    const motd = async () => execIn((await projectContainers(app)).find((c) => c.service === 'app')!.id, ['cat', '/motd.txt']);
    const first = deployCommand(app, file, { configFiles: [{ path: 'conf/motd.txt', content: 'hello v1\n' }] });
    await expectSucceeded(first);
    expect(logOf(first)).toContain('Wrote 1 config file(s) beside the compose file: conf/motd.txt');
    expect(await motd()).toBe('hello v1');
    await expectSucceeded(deployCommand(app, file, { configFiles: [{ path: 'conf/motd.txt', content: 'hello v2\n' }] }));
    expect(await motd()).toBe('hello v2');

    const outside = deployCommand(app, file, { configFiles: [{ path: '../escape.txt', content: 'x' }] });
    const result = await send(outside);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(result.reason).toContain('config files');
    expect(await exists(join(stackDir(app), 'escape.txt'))).toBe(false);
    expect(await motd()).toBe('hello v2');
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
  });
});

describe('a Swarm stack (stack)', { timeout: 240_000 }, () => {
  const app = stackName('swarm');
  let port: number;

  const file = () => `services:
  web:
    image: busybox:latest
    init: true
    command: ${WEB_COMMAND}
    environment:
      VERSION: \${VERSION}
    ports:
      - target: 8080
        published: \${WEB_PORT}
        mode: host
    volumes:
      - ./www:/www
      - data:/data
    deploy:
      endpoint_mode: dnsrr
${redisService('    deploy:\n      endpoint_mode: dnsrr\n')}volumes:
  data:
  cache:
`;

  const services = async () => (await docker.listServices({ filters: { label: [`com.docker.stack.namespace=${app}`] } })).map((s) => s.Spec!);

  it('deploys with docker stack deploy (taking down the Compose project it ran as before), its services labelled, reached on the host-mode port', async () => {
    port = await freePort();
    await expectSucceeded(deployCommand(app, TWO_SERVICES(), { env: { WEB_PORT: String(port), VERSION: 'compose' } }));
    const token = await waitUntil('the token', () => get(port, '/token'), 30_000, 200);

    const deploy = deployCommand(app, file(), { type: ComposeType.COMPOSE_TYPE_STACK, env: { WEB_PORT: String(port), VERSION: 'swarm' } });
    await expectSucceeded(deploy);
    expect(logOf(deploy)).toContain('The stack ran as container-compose before: taking that down first (its volumes and files are kept)');
    expect(logOf(deploy)).toContain(`Running docker stack deploy --prune --with-registry-auth for stack ${app}`);
    expect(await projectContainers(app)).toEqual([]);
    expect(await waitUntil('the web', () => get(port, '/version'), 30_000, 200)).toBe('swarm');
    // The same named volume and kept files, now under the Swarm stack.
    expect(await get(port, '/token')).toBe(token);
    expect(await get(port, '/volume')).toBe(token);
    const specs = await services();
    expect(specs.map((s) => [s.Name, s.Labels?.['skiff.kind'], s.Labels?.['skiff.id']]).sort()).toEqual([
      [`${app}_cache`, 'compose', `id-${app}`],
      [`${app}_web`, 'compose', `id-${app}`],
    ]);
  });

  it('stops (scaled to 0) and starts again by its labels', async () => {
    await expectSucceeded(workloadCommand('stopWorkload', app));
    expect((await services()).map((s) => s.Mode?.Replicated?.Replicas)).toEqual([0, 0]);
    await waitUntil('the web down', async () => (await get(port, '/version')) === null, 30_000, 200);
    await expectSucceeded(workloadCommand('startWorkload', app));
    expect((await services()).map((s) => s.Mode?.Replicated?.Replicas)).toEqual([1, 1]);
    expect(await waitUntil('the web up', () => get(port, '/version'), 30_000, 200)).toBe('swarm');
  });

  it('removes the stack with its volumes and directory', async () => {
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
    expect(await services()).toEqual([]);
    expect((await volumeNames()).filter((v) => v.startsWith(`${app}_`))).toEqual([]);
    expect(await exists(stackDir(app))).toBe(false);
  });
});

describe('stacks side by side', { timeout: 240_000 }, () => {
  it('runs a plain, a randomized and an isolated stack with the same service names, each routed service on the platform network', async () => {
    const plain = stackName('plain');
    const random = stackName('rand');
    const isolated = stackName('iso');
    const ports = [await freePort(), await freePort(), await freePort()];
    const deploys = [
      deployCommand(plain, TWO_SERVICES(), { env: { WEB_PORT: String(ports[0]), VERSION: 'plain' }, conversion: { routedServices: ['web'] } }),
      deployCommand(random, TWO_SERVICES(), { env: { WEB_PORT: String(ports[1]), VERSION: 'rand' }, conversion: { randomize: true, suffix: 'r7' } }),
      deployCommand(isolated, TWO_SERVICES(), {
        env: { WEB_PORT: String(ports[2]), VERSION: 'iso' },
        conversion: { isolated: true, isolatedVolumes: true, routedServices: ['web'] },
      }),
    ];
    for (const deploy of deploys) await expectSucceeded(deploy);
    expect(await Promise.all(ports.map((p) => waitUntil(`port ${p}`, () => get(p, '/version'), 30_000, 200)))).toEqual(['plain', 'rand', 'iso']);

    expect((await projectContainers(random)).map((c) => c.service).sort()).toEqual(['cache-r7', 'web-r7']);
    expect(await volumeNames()).toEqual(expect.arrayContaining([`${plain}_data`, `${random}_data-r7`, `${isolated}_data-${isolated}`]));
    const web = async (project: string) => {
      const id = (await projectContainers(project)).find((c) => c.service.startsWith('web'))!.id;
      return (await docker.getContainer(id).inspect()).NetworkSettings.Networks;
    };
    const isolatedNetworks = await web(isolated);
    expect(Object.keys(isolatedNetworks).sort()).toEqual([`${isolated}`, `${isolated}_default`, 'skiff-network'].sort());
    expect(isolatedNetworks['skiff-network']!.Aliases).toContain(`web.${isolated}`);
    expect((await web(plain))['skiff-network']!.Aliases).toContain(`web.${plain}`);
    expect(Object.keys(await web(random))).toEqual([`${random}_default`]);

    for (const app of [plain, random, isolated]) await expectSucceeded(workloadCommand('removeWorkload', app, true));
    expect(await docker.listNetworks({ filters: { name: [isolated] } })).toEqual([]);
  });
});

describe('refusals and cancellation', { timeout: 240_000 }, () => {
  it('refuses a custom command that is not a compose deploy, and runs nothing', async () => {
    const app = stackName('refused');
    for (const command of [
      ['exec', 'web', 'sh'],
      ['up', '-H', 'tcp://10.0.0.1:2375'],
    ]) {
      const deploy = deployCommand(app, TWO_SERVICES(), { env: { WEB_PORT: '1', VERSION: '1' }, command });
      const result = await send(deploy);
      expect(result.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
      expect(result.reason).toMatch(command[0] === 'exec' ? /"exec" is not a compose subcommand Skiff runs/ : /the option -H is not allowed/);
      expect(reportServer.eventsOf(deploymentOf(deploy)).at(-1)?.status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_ERROR);
    }
    expect(await projectContainers(app)).toEqual([]);
    expect(await exists(join(stackDir(app), 'code'))).toBe(false);
  });

  it('fails a deploy whose service exits, naming it', async () => {
    const app = stackName('crash');
    const deploy = deployCommand(app, 'services:\n  broken:\n    image: busybox:latest\n    command: ["sh", "-c", "echo about to fail; exit 3"]\n');
    const result = await send(deploy);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'the stack did not start: service broken exited with code 3' });
    expect(logOf(deploy)).toContain('  about to fail');
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
  });

  it('cancels a deploy while Compose runs: the program is killed and the deployment ends CANCELLED', async () => {
    const app = stackName('cancel');
    // `up` waits for `slow` to be healthy, which it never is during its start period.
    const file = `services:
  slow:
    image: busybox:latest
    init: true
    command: ["sleep", "600"]
    healthcheck:
      test: ["CMD", "false"]
      interval: 1s
      start_period: 600s
  web:
    image: busybox:latest
    init: true
    command: ["sleep", "600"]
    depends_on:
      slow:
        condition: service_healthy
`;
    const deploy = deployCommand(app, file);
    await publishCommand(nc, deploy);
    await waitUntil('compose running', async () => logOf(deploy).some((l) => l.startsWith('Running ')) && (await projectContainers(app)).length > 0, 60_000, 200);
    const composeProcesses = () => processesMentioning(join(stackDir(app), 'code'));
    expect((await composeProcesses()).length).toBeGreaterThan(0);

    // killBuild: the Compose run (it builds and pulls) counts as the build.
    expect(await cancel(app, true)).toEqual({ commandIds: [deploy.commandId], error: '' });
    const result = await waitUntil('the cancel', () => resultOf(deploy.commandId), 10_000, 100);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: KILL_BUILD_REASON });
    // The deployment's events are reports of their own: the last may arrive after the command's result.
    await waitUntil('the cancelled event', () => reportServer.eventsOf(deploymentOf(deploy)).at(-1)?.status === DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED, 10_000, 100);
    expect(await composeProcesses()).toEqual([]);
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
  });
});

describe('cancelling the wait', { timeout: 240_000 }, () => {
  it('cancels a deploy that waits for a service that keeps restarting; killBuild leaves it alone', async () => {
    const app = stackName('restarts');
    const deploy = deployCommand(app, 'services:\n  flaky:\n    image: busybox:latest\n    restart: always\n    command: ["sh", "-c", "sleep 0.3; exit 1"]\n');
    await publishCommand(nc, deploy);
    await waitUntil('the wait', () => logOf(deploy).some((l) => l.startsWith('flaky: restarting')), 60_000, 200);
    expect((await cancel(app, true)).error).toBe(`the deployment of compose:${app} is past its build: its rollout runs`);
    expect(await cancel(app, false)).toEqual({ commandIds: [deploy.commandId], error: '' });
    const result = await waitUntil('the cancel', () => resultOf(deploy.commandId), 10_000, 100);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(reportServer.eventsOf(deploymentOf(deploy)).at(-1)?.status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED);
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
  });
});

describe('a stack from git', { timeout: 240_000 }, () => {
  it('serves the files of its source, refreshed by a redeploy, while what the service wrote beside them stays', async () => {
    const app = stackName('git');
    const port = await freePort();
    const repo = await git.createRepo(`stack-${run}`, {
      'deploy/docker-compose.yml': `services:
  web:
    image: busybox:latest
    init: true
    command: ["sh", "-c", "([ -f /www/data/token ] || (mkdir -p /www/data && cat /proc/sys/kernel/random/uuid > /www/data/token)) && exec httpd -f -p 8080 -h /www"]
    ports:
      - "127.0.0.1:\${WEB_PORT}:8080"
    volumes:
      - ./site:/www
`,
      'deploy/site/index.html': 'version one\n',
    });
    const source: GitSource = { url: repo.url, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED };
    const options = { git: source, composePath: './deploy/docker-compose.yml', env: { WEB_PORT: String(port) } };
    const first = deployCommand(app, '', options);
    await expectSucceeded(first);
    expect(logOf(first).some((l) => l.startsWith('Cloned commit'))).toBe(true);
    expect(await waitUntil('the page', () => get(port, '/index.html'), 30_000, 200)).toBe('version one');
    const token = await waitUntil('the token', () => get(port, '/data/token'), 30_000, 200);

    await repo.commit({ 'deploy/site/index.html': 'version two\n' });
    await expectSucceeded(deployCommand(app, '', options));
    expect(await waitUntil('version two', async () => (await get(port, '/index.html')) === 'version two' && 'yes', 30_000, 200)).toBe('yes');
    expect(await get(port, '/data/token')).toBe(token);
    expect(await readFile(join(stackDir(app), 'code', 'deploy', 'site', 'index.html'), 'utf8')).toBe('version two\n');
    await expectSucceeded(workloadCommand('removeWorkload', app, true));
  });
});

async function cancel(appName: string, buildOnly: boolean): Promise<ControlReply> {
  const request: ControlRequest = { request: { $case: 'cancelWorkload', value: { workloadKey: `compose:${appName}`, deploymentId: '', buildOnly, commandId: '' } } };
  return requestControl(nc, serverId, request);
}

/** Processes (of this machine) whose command line mentions `text`. */
async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').some((arg) => arg.includes(text))) found.push(pid);
  }
  return found;
}
