// Finding the Compose program on this machine (Debian 12: docker-compose v1, no CLI plugin),
// and what a container-compose deploy says when there is none.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandKind, CommandStatus, ComposeType, DeploymentStatus, WorkloadKind, type DeploymentEvent, type CommandResult } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { dockerCliOf } from '../build/settings.js';
import { deployComposeHandler } from '../handlers/deploy-compose.js';
import { CommandJournal } from '../pipeline/journal.js';
import { TestServices } from '../testing/swarm-services.js';
import { detectComposeProgram, NO_COMPOSE_PROGRAM } from './program.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', DOCKER_HOST: 'unix:///var/run/docker.sock' };
const dockerCli = dockerCliOf(null);
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('detectComposeProgram', () => {
  it('finds docker-compose when the docker CLI has no compose plugin', async () => {
    const plugin = await detectComposeProgram({ dockerCli, configured: 'docker compose', env });
    const found = await detectComposeProgram({ dockerCli, configured: null, env });
    if (plugin.program) {
      expect(found.program).toEqual(plugin.program);
      return;
    }
    expect(plugin).toEqual({ program: null, missing: 'SKIFF_COMPOSE_PROGRAM (docker compose) does not answer `version`' });
    expect(found.program).toMatchObject({ name: 'docker-compose', prefix: [], file: expect.stringMatching(/\/docker-compose$/) });
    expect(found.program?.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('uses the configured program, and says so when it does not answer', async () => {
    const configured = await detectComposeProgram({ dockerCli, configured: '/usr/bin/docker-compose', env });
    expect(configured.program?.file).toBe('/usr/bin/docker-compose');
    expect(await detectComposeProgram({ dockerCli, configured: '/nonexistent/docker-compose', env })).toEqual({
      program: null,
      missing: 'SKIFF_COMPOSE_PROGRAM (/nonexistent/docker-compose) does not answer `version`',
    });
    expect((await detectComposeProgram({ dockerCli, configured: 'a b c', env })).missing).toMatch(/^SKIFF_COMPOSE_PROGRAM must be/);
  });

  it('finds nothing on a PATH without one', async () => {
    expect(await detectComposeProgram({ dockerCli: '/nonexistent/docker', configured: null, env: { ...env, PATH: '/nonexistent' } })).toEqual({
      program: null,
      missing: NO_COMPOSE_PROGRAM,
    });
  });
});

describe('a container-compose deploy without a Compose program', () => {
  it('fails naming what is missing, before touching anything', async () => {
    const t = new TestServices('skt-nocmp');
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-nocompose-'));
    dirs.push(dataDir);
    const journal = await CommandJournal.open(dataDir);
    const events: DeploymentEvent[] = [];
    const results: CommandResult[] = [];
    const handler = deployComposeHandler({
      driver: t.driver,
      journal,
      reports: { reportEvent: (e) => events.push(e), reportResult: (r) => results.push(r) },
      compose: { dataDir, dockerCli, dockerSocket: '/var/run/docker.sock', program: { program: null, missing: NO_COMPOSE_PROGRAM }, timeoutMs: 60_000 },
    });
    const command = {
      commandId: `cmd-${t.run}`,
      serverId: 'local',
      kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE,
      workloadKey: 'compose:c1',
      createdAt: undefined,
      deadline: undefined,
      payload: {
        $case: 'deployCompose' as const,
        value: {
          deploymentId: `dep-${t.run}`,
          workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'c1', appName: `skt-nocmp-${t.run}` },
          composeType: ComposeType.COMPOSE_TYPE_CONTAINER_COMPOSE,
          composeText: 'services:\n  web:\n    image: busybox:latest\n',
          source: undefined,
          composePath: '',
          conversion: undefined,
          envFile: '',
          configFiles: [],
          command: [],
          allowHostPrivileges: false,
          forbiddenHostPorts: [],
          maxHostPorts: 0,
        },
      },
    };
    expect(handler.validate(command)).toBeNull();
    await journal.accept(command);
    await journal.start(command.commandId);
    const outcome = await handler.run({ ...t.context(command), log: pino({ level: 'silent' }) });
    expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: NO_COMPOSE_PROGRAM });
    expect(events.at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason: NO_COMPOSE_PROGRAM });
    await journal.close();
  });
});
