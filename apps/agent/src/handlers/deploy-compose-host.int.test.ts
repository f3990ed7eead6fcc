// Issue 13, "A compose stack is root on the host": the agent refuses a compose file using host
// privileges unless the DeployCompose command allows them (allow_host_privileges). The file is
// checked as fetched (a git source's too), before anything runs: no Docker is touched here.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommandKind, CommandStatus, ComposeType, type CommandResult, type DeploymentEvent, DeploymentStatus, WorkloadKind } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { DockerDriver } from '../docker/driver.js';
import { CommandJournal } from '../pipeline/journal.js';
import { deployComposeHandler } from './deploy-compose.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const SOCKET = 'services:\n  agent:\n    image: busybox\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n';

function deployCommand(n: number, allowHostPrivileges: boolean): Command {
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
      },
    },
  };
}

describe('DeployCompose and host privileges', () => {
  it('refuses a file that binds the Docker socket when the command does not allow it, before touching Docker', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-hostpriv-'));
    dirs.push(dataDir);
    const journal = await CommandJournal.open(dataDir);
    const events: DeploymentEvent[] = [];
    const results: CommandResult[] = [];
    const touched: string[] = [];
    // Any use of the driver is recorded: the refusal comes first.
    const driver = new Proxy({}, { get: (_t, name) => () => { touched.push(String(name)); throw new Error(`driver.${String(name)} called`); } }) as DockerDriver;
    const handler = deployComposeHandler({
      driver,
      journal,
      reports: { reportEvent: (e) => events.push(e), reportResult: (r) => results.push(r) },
      compose: { dataDir, dockerCli: '/nonexistent/docker', dockerSocket: '/var/run/docker.sock', program: { program: null, missing: 'none' }, timeoutMs: 60_000 },
    });
    const command = deployCommand(1, false);
    expect(handler.validate(command)).toBeNull();
    await journal.accept(command);
    await journal.start(command.commandId);
    const outcome = await handler.run({ command, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
    const reason = 'docker-compose.yml: service "agent": volumes is not allowed on this server (the Docker socket)';
    expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason });
    expect(events.at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason });
    expect(touched).toEqual([]);
    // Nothing of the stack was swapped in.
    const stacks = await readdir(dataDir, { recursive: true });
    expect(stacks.filter((p) => p.endsWith('docker-compose.yml'))).toEqual([]);
    await journal.close();
  });
});
