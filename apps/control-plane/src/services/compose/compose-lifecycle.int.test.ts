// compose.deploy / redeploy / stop / start / delete / cancelDeployment / killBuild / cleanQueues
// on a real Postgres: the DeployCompose and lifecycle commands they write to the outbox, what
// they refuse, and what the agent's reports (applied as the gRPC report server applies them)
// do to the deployments and the stack.
import { randomBytes } from 'node:crypto';
import { CANCEL_REASON, KILL_BUILD_REASON, REMOVED_REASON } from '@skiff/domain';
import {
  Command,
  CommandStatus,
  ComposeType,
  DeploymentStatus,
  WorkloadKind,
  timestampFromDate,
  timestampToDate,
} from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';

/** What an operation that queued a command answers. */
const QUEUED = { commandId: expect.stringMatching(/^cmd_/), status: 'queued' };

let t: TestPlatform;
let env: string;
let projectId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'stacks', env: 'REGION=eu\nDB_HOST=db.internal' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
  await t.call('environment.update', { environmentId: env, env: 'TIER=staging' });
});
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>, call = t.call) => {
  const r = await call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};
const refused = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(400);
  return r.body as { message: string; issues: { path: string[]; message: string }[] };
};

const WEB_AND_REDIS = `services:
  web:
    image: busybox:latest
    command: ["httpd", "-f", "-p", "8080"]
    volumes:
      - ./site:/www
  cache:
    image: redis:8
    volumes:
      - data:/data
volumes:
  data:
`;

const unique = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;

async function stack(overrides: Record<string, unknown> = {}) {
  const s = await ok('compose.create', { name: 'Shop', environmentId: env, composeFile: WEB_AND_REDIS, ...overrides });
  return s as { composeId: string; appName: string };
}

const commandsOf = async (composeId: string) =>
  (await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `compose:${composeId}`).execute()).sort(
    (a, b) => Number(a.position) - Number(b.position),
  );
const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));
const deployOf = (payload: string) => {
  const command = decode(payload);
  if (command.payload?.$case !== 'deployCompose') throw new Error(`not a DeployCompose: ${command.payload?.$case}`);
  return { command, deploy: command.payload.value };
};
const status = async (composeId: string) => (await ok('compose.one', { composeId })).applicationStatus as string;
const deploymentsOf = async (composeId: string) =>
  (await ok('deployment.allByCompose', { composeId })) as { deploymentId: string; status: string; reason: string | null; title: string }[];

/** What an agent reports, applied as the report server applies it. */
function agentReports() {
  const reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
  const sequences = new Map<string, number>();
  return {
    event: (deploymentId: string, commandId: string, s: DeploymentStatus, reason = '', lines: string[] = []) => {
      const sequence = (sequences.get(deploymentId) ?? 0) + 1;
      sequences.set(deploymentId, sequence);
      return reports.applyEvent('local', {
        deploymentId,
        commandId,
        sequence: String(sequence),
        status: s,
        logLines: lines.map((text) => ({ text, time: undefined })),
        reason,
        occurredAt: timestampFromDate(new Date()),
      });
    },
    result: (commandId: string, s: CommandStatus, reason = '') =>
      reports.applyCommandResult('local', { commandId, status: s, reason, finishedAt: timestampFromDate(new Date()) }),
  };
}

describe('compose.deploy', () => {
  it('queues a DeployCompose of the raw file with the resolved .env, and a queued deployment record', async () => {
    const s = await stack();
    await ok('compose.update', { composeId: s.composeId, env: 'URL=https://${{project.DB_HOST}}/x\nSTAGE=${{environment.TIER}}\nPASS=it\'s $ecret' });
    const before = Date.now();
    const d = await ok('compose.deploy', { composeId: s.composeId });
    expect(d).toMatchObject({ composeId: s.composeId, applicationId: null, status: 'queued', title: 'Deploy', serverId: null });

    const [row] = await commandsOf(s.composeId);
    expect(row).toMatchObject({ kind: 'COMMAND_KIND_DEPLOY_COMPOSE', status: 'pending', serverId: 'local', deploymentId: d.deploymentId });
    // The payload is sealed: env values never appear in the row.
    expect(row!.payload).not.toContain('ecret');
    const { command, deploy } = deployOf(row!.payload);
    expect(command.workloadKey).toBe(`compose:${s.composeId}`);
    expect(timestampToDate(command.deadline!).getTime()).toBeGreaterThanOrEqual(before + 59 * 60_000);
    expect(deploy).toEqual({
      deploymentId: d.deploymentId,
      workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: s.composeId, appName: s.appName },
      composeType: ComposeType.COMPOSE_TYPE_CONTAINER_COMPOSE,
      composeText: WEB_AND_REDIS,
      source: undefined,
      composePath: '',
      conversion: { randomize: false, suffix: '', isolated: false, isolatedVolumes: false, routedServices: [] },
      envFile: "REGION=eu\nDB_HOST=db.internal\nTIER=staging\nURL=https://db.internal/x\nSTAGE=staging\nPASS='it\\'s $ecret'\n",
      configFiles: [],
      command: [],
      // The platform host, an organization not trusted there: the agent refuses host privileges.
      allowHostPrivileges: false,
      // The ports Skiff reserves (no other workload publishes one on this server), and the cap.
      forbiddenHostPorts: [
        { first: 80, last: 80, protocol: 'tcp', reason: "reserved for Skiff's proxy (HTTP)" },
        { first: 443, last: 443, protocol: 'tcp', reason: "reserved for Skiff's proxy (HTTPS)" },
        { first: 2020, last: 2020, protocol: 'tcp', reason: "reserved for Skiff's proxy dashboard" },
        { first: 5030, last: 5030, protocol: 'tcp', reason: "reserved for Skiff's cluster registry" },
        { first: 5031, last: 5031, protocol: 'tcp', reason: "reserved for Skiff's cluster registry mirror" },
        { first: 443, last: 443, protocol: 'udp', reason: "reserved for Skiff's proxy (HTTP/3)" },
      ],
      maxHostPorts: 100,
    });

    const redeployed = await ok('compose.redeploy', { composeId: s.composeId, title: 'Again' });
    expect(redeployed.title).toBe('Again');
    expect((await deploymentsOf(s.composeId)).map((x) => x.deploymentId)).toEqual([redeployed.deploymentId, d.deploymentId]);
    expect((await commandsOf(s.composeId)).map((c) => c.deploymentId)).toEqual([d.deploymentId, redeployed.deploymentId]);
    expect(await status(s.composeId)).toBe('idle');
  });

  it('sends a git source with its SSH key and path, the conversion settings, the routed services and the custom command', async () => {
    const key = await ok('sshKey.generate', { name: 'stack key' });
    const s = await stack({ sourceType: 'git', composeType: 'stack', composeFile: '' });
    await ok('compose.update', {
      composeId: s.composeId,
      customGitUrl: 'git@git.example.com:acme/shop.git',
      customGitBranch: 'release/2',
      customGitSSHKeyId: key.sshKeyId,
      composePath: './deploy//stack.yml',
      randomize: true,
      suffix: 'r7',
      isolatedDeployment: true,
      isolatedDeploymentsVolume: true,
      command: 'docker stack deploy --prune --resolve-image never',
    });
    for (const [host, serviceName] of [['a', 'web'], ['b', 'api'], ['c', 'web']]) {
      await ok('domain.create', { host: `${host}-${s.appName}.example.com`, composeId: s.composeId, serviceName, port: 8080 });
    }
    await ok('compose.deploy', { composeId: s.composeId });
    const { deploy } = deployOf((await commandsOf(s.composeId))[0]!.payload);
    expect(deploy.composeType).toBe(ComposeType.COMPOSE_TYPE_STACK);
    expect(deploy.composeText).toBe('');
    expect(deploy.composePath).toBe('deploy/stack.yml');
    expect(deploy.source?.kind?.$case).toBe('git');
    const git = deploy.source?.kind?.$case === 'git' ? deploy.source.kind.value : undefined;
    expect(git).toMatchObject({ url: 'git@git.example.com:acme/shop.git', branch: 'release/2', submodules: false });
    expect(git!.sshPrivateKey).toContain('PRIVATE KEY');
    expect(deploy.conversion).toEqual({ randomize: true, suffix: 'r7', isolated: true, isolatedVolumes: true, routedServices: ['api', 'web'] });
    expect(deploy.command).toEqual(['deploy', '--prune', '--resolve-image', 'never']);
  });

  it('refuses what cannot deploy, naming the field, and queues nothing', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ composeFile: '' }, {}, 'composeFile'],
      [{ composeFile: 'services: [' }, {}, 'composeFile'],
      [{ composeFile: 'services:\n  web:\n    image: x\n' }, { randomize: true }, 'suffix'],
      [{ composeFile: 'services:\n  web:\n    image: x\n' }, { env: 'A=${{environment.MISSING}}' }, 'env'],
      [{ sourceType: 'git', composeFile: '' }, {}, 'customGitUrl'],
      [{ sourceType: 'git', composeFile: '' }, { customGitUrl: 'https://git.example.com/a.git' }, 'customGitBranch'],
      [{ sourceType: 'forgeA' }, {}, 'forgeAId'],
    ];
    for (const [create, update, field] of cases) {
      const s = await stack(create);
      if (Object.keys(update).length > 0) await ok('compose.update', { composeId: s.composeId, ...update });
      const body = await refused('compose.deploy', { composeId: s.composeId });
      expect(body.issues[0]!.path, `${field}: ${body.issues[0]?.message}`).toEqual([field]);
      expect(await commandsOf(s.composeId)).toEqual([]);
      expect(await t.db.selectFrom('deployments').select('id').where('composeId', '=', s.composeId).execute()).toEqual([]);
    }
    // A domain naming a service the raw file does not define: the conversion refuses it.
    const s = await stack();
    await ok('domain.create', { host: `x-${s.appName}.example.com`, composeId: s.composeId, serviceName: 'nope', port: 80 });
    expect((await refused('compose.deploy', { composeId: s.composeId })).issues[0]!.message).toMatch(/service "nope"/);
  });

  it('refuses a file or env too big for a command to carry, naming the field, and queues nothing', async () => {
    // Over the ~1 MiB NATS carries, under the 5 MiB request limit: such a command could never reach the agent.
    const big = `${WEB_AND_REDIS}# ${'x'.repeat(2 * 1024 * 1024)}\n`;
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ composeFile: big }, {}, 'composeFile'],
      [{}, { env: `BIG=${'y'.repeat(2 * 1024 * 1024)}` }, 'env'],
    ];
    for (const [create, update, field] of cases) {
      const s = await stack(create);
      if (Object.keys(update).length > 0) await ok('compose.update', { composeId: s.composeId, ...update });
      const body = await refused('compose.deploy', { composeId: s.composeId });
      expect(body.issues[0]!.path, `${field}: ${body.issues[0]?.message}`).toEqual([field]);
      expect(body.message).toMatch(/bytes/);
      expect(await commandsOf(s.composeId)).toEqual([]);
      expect(await t.db.selectFrom('deployments').select('id').where('composeId', '=', s.composeId).execute()).toEqual([]);
    }
  });

  it('takes only a compose command of the stack type, at update time too', async () => {
    const s = await stack();
    for (const command of ['rm -f', 'up -d -f /etc/passwd', 'down -v', 'exec web sh', 'up "broken']) {
      const body = await refused('compose.update', { composeId: s.composeId, command });
      expect(body.issues[0]!.path, command).toEqual(['command']);
    }
    await ok('compose.update', { composeId: s.composeId, command: 'docker compose --profile tools up -d web' });
    // The stored command no longer fits when the type changes.
    expect((await refused('compose.update', { composeId: s.composeId, composeType: 'stack' })).issues[0]!.path).toEqual(['command']);
    await ok('compose.deploy', { composeId: s.composeId });
    expect(deployOf((await commandsOf(s.composeId))[0]!.payload).deploy.command).toEqual(['--profile', 'tools', 'up', '-d', 'web']);
    expect(await ok('compose.getDefaultCommand', { composeId: s.composeId })).toEqual({
      command: 'docker compose --profile tools up -d web'.replace('docker compose ', ''),
      argv: ['--profile', 'tools', 'up', '-d', 'web'],
      custom: true,
    });
    await ok('compose.update', { composeId: s.composeId, command: null, composeType: 'stack' });
    expect(await ok('compose.getDefaultCommand', { composeId: s.composeId })).toEqual({
      command: 'deploy --prune --with-registry-auth',
      argv: ['deploy', '--prune', '--with-registry-auth'],
      custom: false,
    });
  });
});

describe('deployments of a stack as the agent reports them', () => {
  it('move the deployment and the stack: running, done with the log, error with its reason', async () => {
    const s = await stack();
    const agent = agentReports();
    const d = await ok('compose.deploy', { composeId: s.composeId });
    const [command] = await commandsOf(s.composeId);
    expect(await agent.event(d.deploymentId, command!.id, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING, '', ['Creating network'])).toBe('applied');
    expect(await status(s.composeId)).toBe('running');
    await agent.event(d.deploymentId, command!.id, DeploymentStatus.DEPLOYMENT_STATUS_DONE, '', ['Container web started']);
    await agent.result(command!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await status(s.composeId)).toBe('done');
    expect(await ok('deployment.readLogs', { deploymentId: d.deploymentId })).toEqual({
      deploymentId: d.deploymentId,
      status: 'done',
      reason: null,
      log: 'Creating network\nContainer web started\n',
    });

    const again = await ok('compose.redeploy', { composeId: s.composeId });
    const second = (await commandsOf(s.composeId)).at(-1)!;
    await agent.result(second.id, CommandStatus.COMMAND_STATUS_FAILED, 'docker compose up failed: pull access denied');
    expect(await status(s.composeId)).toBe('error');
    expect((await deploymentsOf(s.composeId))[0]).toMatchObject({ deploymentId: again.deploymentId, status: 'error', reason: 'docker compose up failed: pull access denied' });
  });

  it('give the stack back its previous status when a running deployment is cancelled', async () => {
    const s = await stack();
    const agent = agentReports();
    const run = async () => {
      const d = await ok('compose.redeploy', { composeId: s.composeId });
      const c = (await commandsOf(s.composeId)).at(-1)!;
      await agent.event(d.deploymentId, c.id, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING);
      return { d, c };
    };
    const first = await run();
    await agent.event(first.d.deploymentId, first.c.id, DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    const second = await run();
    expect(await status(s.composeId)).toBe('running');
    await agent.result(second.c.id, CommandStatus.COMMAND_STATUS_CANCELLED, CANCEL_REASON);
    expect(await status(s.composeId)).toBe('done');
  });
});

describe('compose.stop and compose.start', () => {
  it('are refused before the first deploy, then queue their commands in order and move the status as results come', async () => {
    const s = await stack();
    expect((await refused('compose.stop', { composeId: s.composeId })).message).toBe(
      `Compose stack ${s.appName} was never deployed: deploy it first (compose.deploy)`,
    );
    expect(await commandsOf(s.composeId)).toEqual([]);

    await ok('compose.deploy', { composeId: s.composeId });
    expect(await ok('compose.stop', { composeId: s.composeId })).toEqual(QUEUED);
    expect(await ok('compose.start', { composeId: s.composeId })).toEqual(QUEUED);
    const rows = await commandsOf(s.composeId);
    expect(rows.map((c) => c.kind)).toEqual(['COMMAND_KIND_DEPLOY_COMPOSE', 'COMMAND_KIND_STOP_WORKLOAD', 'COMMAND_KIND_START_WORKLOAD']);
    const ref = { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: s.composeId, appName: s.appName };
    expect(decode(rows[1]!.payload).payload).toEqual({ $case: 'stopWorkload', value: { workload: ref } });
    expect(decode(rows[2]!.payload).payload).toEqual({ $case: 'startWorkload', value: { workload: ref } });

    const agent = agentReports();
    await agent.result(rows[1]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await status(s.composeId)).toBe('idle');
    await agent.result(rows[2]!.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await status(s.composeId)).toBe('done');
    await ok('compose.stop', { composeId: s.composeId });
    await agent.result((await commandsOf(s.composeId)).at(-1)!.id, CommandStatus.COMMAND_STATUS_FAILED, 'docker compose stop failed');
    expect(await status(s.composeId)).toBe('error');
  });
});

describe('compose.delete', () => {
  it('deletes a stack that was never deployed at once, with its domains and their routes', async () => {
    const s = await stack();
    const domain = await ok('domain.create', { host: `${s.appName}.example.com`, composeId: s.composeId, serviceName: 'web', port: 8080 });
    const deleted = await ok('compose.delete', { composeId: s.composeId, deleteVolumes: true });
    expect(deleted).toMatchObject({ composeId: s.composeId, deleteVolumes: true });
    expect((await t.call('compose.one', { composeId: s.composeId })).status).toBe(404);
    expect(await commandsOf(s.composeId)).toEqual([]);
    expect((await t.call('domain.one', { domainId: domain.domainId })).status).toBe(404);
    const proxy = await t.db.selectFrom('commands').select('payload').where('workloadKey', '=', 'proxy:local').orderBy('position', 'desc').executeTakeFirstOrThrow();
    const applied = decode(proxy.payload).payload;
    expect(applied?.$case === 'applyProxyConfig' && JSON.parse(applied.value.inputJson).routes.some((r: { domainId: string }) => r.domainId === domain.domainId)).toBe(false);
  });

  it('removes a deployed stack first (its volumes only when asked), refuses new work meanwhile, and deletes the record once the agent reports it gone', async () => {
    for (const deleteVolumes of [false, true]) {
      const s = await stack();
      await ok('compose.deploy', { composeId: s.composeId });
      const domain = await ok('domain.create', { host: `${s.appName}.example.com`, composeId: s.composeId, serviceName: 'web', port: 8080 });
      const deleted = await ok('compose.delete', { composeId: s.composeId, ...(deleteVolumes ? { deleteVolumes } : {}) });
      expect(deleted).toMatchObject({ composeId: s.composeId, appName: s.appName, deleteVolumes });
      const remove = (await commandsOf(s.composeId)).at(-1)!;
      expect(remove).toMatchObject({ kind: 'COMMAND_KIND_REMOVE_WORKLOAD', status: 'pending' });
      expect(decode(remove.payload).payload).toEqual({
        $case: 'removeWorkload',
        value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: s.composeId, appName: s.appName }, removeVolumes: deleteVolumes },
      });
      for (const op of ['compose.deploy', 'compose.redeploy', 'compose.stop', 'compose.start']) {
        expect((await refused(op, { composeId: s.composeId })).message, op).toBe(`Compose stack ${s.appName} is being deleted`);
      }
      await ok('compose.delete', { composeId: s.composeId });
      expect(await commandsOf(s.composeId)).toHaveLength(2);
      expect((await t.call('compose.one', { composeId: s.composeId })).status).toBe(200);

      await agentReports().result(remove.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
      expect((await t.call('compose.one', { composeId: s.composeId })).status).toBe(404);
      expect((await t.call('domain.one', { domainId: domain.domainId })).status).toBe(404);
      expect(await t.db.selectFrom('deployments').select('id').where('composeId', '=', s.composeId).execute()).toEqual([]);
    }
  });

  it('keeps the stack in error when the removal fails; it can be deleted again', async () => {
    const s = await stack();
    await ok('compose.deploy', { composeId: s.composeId });
    await ok('compose.delete', { composeId: s.composeId });
    const first = (await commandsOf(s.composeId)).at(-1)!;
    await agentReports().result(first.id, CommandStatus.COMMAND_STATUS_FAILED, 'docker compose down failed');
    expect(await status(s.composeId)).toBe('error');
    await ok('compose.delete', { composeId: s.composeId, deleteVolumes: true });
    const second = (await commandsOf(s.composeId)).at(-1)!;
    expect(second.id).not.toBe(first.id);
    await agentReports().result(second.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect((await t.call('compose.one', { composeId: s.composeId })).status).toBe(404);
  });
});

describe('cancelDeployment, killBuild and cleanQueues (work that has not reached the agent)', () => {
  it('cancelDeployment ends the queued deployment at once; killBuild refuses when the current job is not a deployment', async () => {
    const s = await stack();
    const d = await ok('compose.deploy', { composeId: s.composeId });
    expect(await ok('compose.cancelDeployment', { composeId: s.composeId })).toEqual({ deploymentIds: [d.deploymentId] });
    expect((await deploymentsOf(s.composeId))[0]).toMatchObject({ status: 'cancelled', reason: CANCEL_REASON });
    expect((await commandsOf(s.composeId))[0]).toMatchObject({ status: 'failed', resultReason: CANCEL_REASON, publishedAt: null });
    expect(await status(s.composeId)).toBe('idle');
    expect((await refused('compose.cancelDeployment', { composeId: s.composeId })).message).toBe(
      `Nothing to cancel: no job of compose stack ${s.appName} is queued or running`,
    );

    const d2 = await ok('compose.redeploy', { composeId: s.composeId });
    expect(await ok('compose.killBuild', { composeId: s.composeId })).toEqual({ deploymentIds: [d2.deploymentId] });
    expect((await deploymentsOf(s.composeId))[0]).toMatchObject({ status: 'cancelled', reason: KILL_BUILD_REASON });
    await ok('compose.stop', { composeId: s.composeId });
    expect((await refused('compose.killBuild', { composeId: s.composeId })).message).toBe(
      `No build of compose stack ${s.appName} runs: its current job is not a deployment`,
    );
  });

  it('cleanQueues removes every waiting job: deployments end cancelled, a stop is dropped, the status stays', async () => {
    const s = await stack();
    const d1 = await ok('compose.deploy', { composeId: s.composeId });
    const d2 = await ok('compose.redeploy', { composeId: s.composeId });
    await ok('compose.stop', { composeId: s.composeId });
    expect(await ok('compose.cleanQueues', { composeId: s.composeId })).toEqual({ deploymentIds: [d1.deploymentId, d2.deploymentId] });
    expect((await commandsOf(s.composeId)).map((c) => [c.kind, c.status, c.resultReason])).toEqual([
      ['COMMAND_KIND_DEPLOY_COMPOSE', 'failed', REMOVED_REASON],
      ['COMMAND_KIND_DEPLOY_COMPOSE', 'failed', REMOVED_REASON],
      ['COMMAND_KIND_STOP_WORKLOAD', 'failed', REMOVED_REASON],
    ]);
    expect(await status(s.composeId)).toBe('idle');
    expect((await refused('compose.cleanQueues', { composeId: s.composeId })).message).toBe(`Nothing waits in the queue of compose stack ${s.appName}`);
  });
});

describe('access', () => {
  it('follows the stack: members need it granted, delete needs canDeleteServices, other organizations see nothing', async () => {
    const s = await stack();
    const member = await addMember(t, `${unique('compose')}@test.local`);
    const m = t.as(member.key);
    const ops = ['compose.deploy', 'compose.redeploy', 'compose.stop', 'compose.start', 'compose.cancelDeployment', 'compose.killBuild', 'compose.cleanQueues'];
    for (const op of [...ops, 'compose.delete', 'deployment.allByCompose']) {
      expect((await m(op, { composeId: s.composeId })).status, op).toBe(403);
    }
    await ok('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [s.composeId] });
    const d = await ok('compose.deploy', { composeId: s.composeId }, m);
    expect((await ok('deployment.allByCompose', { composeId: s.composeId }, m))[0].deploymentId).toBe(d.deploymentId);
    expect((await ok('deployment.readLogs', { deploymentId: d.deploymentId }, m)).status).toBe('queued');
    expect((await m('compose.delete', { composeId: s.composeId })).status).toBe(403);

    const other = await ok('organization.create', { name: unique('Elsewhere') });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
    for (const op of [...ops, 'compose.delete', 'deployment.allByCompose']) {
      expect((await t.as(key)(op, { composeId: s.composeId })).status, op).toBe(404);
    }
    expect((await t.as(key)('deployment.readLogs', { deploymentId: d.deploymentId })).status).toBe(404);
    expect((await commandsOf(s.composeId)).map((c) => c.kind)).toEqual(['COMMAND_KIND_DEPLOY_COMPOSE']);
  });
});

describe('removing what holds stacks', () => {
  it('queues the removal (volumes kept) of every deployed stack of a removed environment, and of no other', async () => {
    const project = await ok('project.create', { name: unique('going') });
    const e = project.environments[0].environmentId as string;
    const deployed = await ok('compose.create', { name: 'd', environmentId: e, composeFile: WEB_AND_REDIS });
    const never = await ok('compose.create', { name: 'n', environmentId: e, composeFile: WEB_AND_REDIS });
    await ok('compose.deploy', { composeId: deployed.composeId });
    await ok('project.remove', { projectId: project.projectId });
    const removes = (await commandsOf(deployed.composeId)).filter((c) => c.kind === 'COMMAND_KIND_REMOVE_WORKLOAD').map((c) => decode(c.payload).payload);
    expect(removes).toEqual([
      {
        $case: 'removeWorkload',
        value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: deployed.composeId, appName: deployed.appName }, removeVolumes: false },
      },
    ]);
    expect(await commandsOf(never.composeId)).toEqual([]);
  });

  const removeOf = async (composeId: string) =>
    (await commandsOf(composeId)).filter((c) => c.kind === 'COMMAND_KIND_REMOVE_WORKLOAD').map((c) => decode(c.payload).payload);

  it("says what project.remove keeps of a deployed stack (its volumes and bind-mounted files), and nothing of one never deployed", async () => {
    const project = await ok('project.create', { name: unique('keeping') });
    const e = project.environments[0].environmentId as string;
    const deployed = await ok('compose.create', { name: 'd', environmentId: e, composeFile: WEB_AND_REDIS });
    await ok('compose.create', { name: 'n', environmentId: e, composeFile: WEB_AND_REDIS });
    await ok('compose.deploy', { composeId: deployed.composeId });
    const answer = await ok('project.remove', { projectId: project.projectId });
    expect(answer.removed).toMatchObject({ compose: 2 });
    expect(answer.kept).toEqual([
      { kind: 'composeVolumes', name: deployed.appName, appName: deployed.appName, serverId: null, reason: expect.stringContaining('unless deleteVolumes is true') },
      { kind: 'composeFiles', name: `compose/${deployed.appName}/files`, appName: deployed.appName, serverId: null, reason: expect.stringContaining('unless deleteVolumes is true') },
    ]);
  });

  it('removes the volumes of the stacks of a removed project or environment when deleteVolumes is true, and keeps nothing', async () => {
    const project = await ok('project.create', { name: unique('wiping') });
    const e = project.environments[0].environmentId as string;
    const inProject = await ok('compose.create', { name: 'p', environmentId: e, composeFile: WEB_AND_REDIS });
    await ok('compose.deploy', { composeId: inProject.composeId });
    const staging = await ok('environment.create', { projectId: project.projectId, name: 'staging' });
    const inEnvironment = await ok('compose.create', { name: 'e', environmentId: staging.environmentId, composeFile: WEB_AND_REDIS });
    await ok('compose.deploy', { composeId: inEnvironment.composeId });

    const environmentAnswer = await ok('environment.remove', { environmentId: staging.environmentId, deleteVolumes: true });
    expect(environmentAnswer.kept).toEqual([]);
    expect(await removeOf(inEnvironment.composeId)).toMatchObject([{ value: { removeVolumes: true } }]);
    expect(await removeOf(inProject.composeId)).toEqual([]);

    const projectAnswer = await ok('project.remove', { projectId: project.projectId, deleteVolumes: true });
    expect(projectAnswer.kept).toEqual([]);
    expect(await removeOf(inProject.composeId)).toMatchObject([{ value: { removeVolumes: true } }]);
  });

  it('refuses a deleteVolumes that is not a boolean, naming it and removing nothing', async () => {
    const project = await ok('project.create', { name: unique('staying') });
    const body = await refused('project.remove', { projectId: project.projectId, deleteVolumes: 'yes' });
    expect(body.issues.map((i) => i.path)).toEqual([['deleteVolumes']]);
    expect((await t.call('project.one', { projectId: project.projectId })).status).toBe(200);
  });
});
