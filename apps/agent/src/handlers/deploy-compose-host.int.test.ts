// Issue 13, "A compose stack is root on the host": the agent refuses a compose file using host
// privileges unless the DeployCompose command allows them (allow_host_privileges). The file is
// checked as fetched (a git source's too), before anything runs: no Docker is touched here.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatComposeDotenv } from '@skiff/domain';
import { type Command, CommandKind, CommandStatus, ComposeType, type CommandResult, type DeployCompose, type DeploymentEvent, DeploymentStatus, WorkloadKind } from '@skiff/proto';
import { startGitServer, type TestGitServer } from '@skiff/testing';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { DockerDriver } from '../docker/driver.js';
import { CommandJournal } from '../pipeline/journal.js';
import { deployComposeHandler } from './deploy-compose.js';

const dirs: string[] = [];
let git: TestGitServer | undefined;
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await git?.stop();
});

const SOCKET = 'services:\n  agent:\n    image: busybox\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n';

function deployCommand(n: number, allowHostPrivileges: boolean, overrides: Partial<DeployCompose> = {}): Command {
  return {
    commandId: `cmd-host-${n}`,
    serverId: 'local',
    kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE,
    workloadKey: 'compose:h1',
    createdAt: undefined,
    deadline: undefined,
    payload: {
      $case: 'deployCompose',
      value: {
        deploymentId: `dep-host-${n}`,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'h1', appName: 'skt-host-priv' },
        composeType: ComposeType.COMPOSE_TYPE_STACK,
        composeText: SOCKET,
        source: undefined,
        composePath: '',
        conversion: undefined,
        envFile: '',
        configFiles: [],
        command: [],
        allowHostPrivileges,
        forbiddenHostPorts: [],
        maxHostPorts: 0,
        ...overrides,
      },
    },
  };
}

/** Runs `command` with a driver that records any use (a refusal comes before Docker); answers the outcome, the events and what was touched. */
async function runRefused(command: Command) {
  const dataDir = await mkdtemp(join(tmpdir(), 'skiff-hostpriv-'));
  dirs.push(dataDir);
  const journal = await CommandJournal.open(dataDir);
  const events: DeploymentEvent[] = [];
  const results: CommandResult[] = [];
  const touched: string[] = [];
  const driver = new Proxy({}, { get: (_t, name) => () => { touched.push(String(name)); throw new Error(`driver.${String(name)} called`); } }) as DockerDriver;
  const handler = deployComposeHandler({
    driver,
    journal,
    reports: { reportEvent: (e) => events.push(e), reportResult: (r) => results.push(r) },
    compose: { dataDir, dockerCli: '/nonexistent/docker', dockerSocket: '/var/run/docker.sock', program: { program: null, missing: 'none' }, timeoutMs: 60_000 },
  });
  expect(handler.validate(command)).toBeNull();
  await journal.accept(command);
  await journal.start(command.commandId);
  const outcome = await handler.run({ command, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
  const stacks = await readdir(dataDir, { recursive: true });
  await journal.close();
  return { outcome, events, touched, swapped: stacks.filter((p) => p.endsWith('docker-compose.yml')) };
}

describe('DeployCompose and host privileges', () => {
  it('refuses a file that binds the Docker socket when the command does not allow it, before touching Docker', async () => {
    const { outcome, events, touched, swapped } = await runRefused(deployCommand(1, false));
    const reason = 'docker-compose.yml: service "agent": volumes is not allowed on this server (the Docker socket)';
    expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason });
    expect(events.at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason });
    expect(touched).toEqual([]);
    // Nothing of the stack was swapped in.
    expect(swapped).toEqual([]);
  });
});

// The published-port gaps of compose stacks: a git source's file (which the control plane never
// sees) is checked by the agent against the ports the command forbids, its `${VAR}` resolved
// with the stack's .env, and the number of host ports it publishes is capped.
describe('DeployCompose and host ports', () => {
  const forbiddenHostPorts = [
    { first: 28180, last: 28189, protocol: 'tcp', reason: '' },
    { first: 80, last: 80, protocol: 'tcp', reason: "reserved for Skiff's proxy (HTTP)" },
    { first: 28181, last: 28181, protocol: 'udp', reason: '' },
  ];

  it("refuses a git source's file publishing a forbidden port through a variable of its .env, naming the service and the port, before touching Docker", async () => {
    git = await startGitServer();
    const repo = await git.createRepo('ports', {
      'deploy/docker-compose.yml': 'services:\n  web:\n    image: busybox\n  api:\n    image: busybox\n    ports:\n      - "127.0.0.1:${API_PORT}:8080"\n',
    });
    const source = { kind: { $case: 'git' as const, value: { url: repo.url, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: { allowPrivate: true } } } };
    const command = deployCommand(2, true, { composeText: '', source, composePath: 'deploy/docker-compose.yml', envFile: formatComposeDotenv(new Map([['API_PORT', '28181']])), forbiddenHostPorts });
    const { outcome, events, touched, swapped } = await runRefused(command);
    const reason = 'deploy/docker-compose.yml: service "api" publishes port 28181/tcp, already published on this server';
    expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason });
    expect(events.at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason });
    expect(touched).toEqual([]);
    expect(swapped).toEqual([]);
  });

  it('refuses a reserved port and a file publishing more host ports than the command allows', async () => {
    const reserved = await runRefused(deployCommand(3, true, { composeText: 'services:\n  edge:\n    image: busybox\n    ports: ["80:80"]\n', forbiddenHostPorts }));
    expect(reserved.outcome.reason).toBe(`docker-compose.yml: service "edge" publishes port 80/tcp, reserved for Skiff's proxy (HTTP)`);
    const many = await runRefused(deployCommand(4, true, { composeText: 'services:\n  all:\n    image: busybox\n    ports: ["1000-1100:1000-1100"]\n', maxHostPorts: 100 }));
    expect(many.outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'docker-compose.yml: publishes 101 host ports, more than the 100 a stack may publish' });
    expect([...reserved.touched, ...many.touched]).toEqual([]);
  });

  // The control plane keeps them as the stack's (a git source's file is read here only).
  it("reports the host ports a file publishes once it is in place, its variables resolved, even when the run then fails; a refused file reports none", async () => {
    const text = 'services:\n  api:\n    image: busybox\n    ports:\n      - "${API_PORT}:8080"\n      - "28195-28196:53/udp"\n      - "28194:8081"\n';
    const placed = await runRefused(deployCommand(5, true, { composeText: text, envFile: formatComposeDotenv(new Map([['API_PORT', '28193']])), forbiddenHostPorts }));
    // The driver stands for Docker here: its first use fails the run after the file was swapped in.
    expect(placed.touched).toEqual(['ensureSwarm']);
    expect(placed.outcome).toMatchObject({ status: CommandStatus.COMMAND_STATUS_FAILED });
    expect(placed.outcome.publishedHostPorts).toEqual({
      ranges: [
        { first: 28193, last: 28194, protocol: 'tcp' },
        { first: 28195, last: 28196, protocol: 'udp' },
      ],
    });
    const refused = await runRefused(deployCommand(6, true, { composeText: text, envFile: formatComposeDotenv(new Map([['API_PORT', '28181']])), forbiddenHostPorts }));
    expect(refused.outcome.publishedHostPorts).toBeUndefined();
  });
});
