// application.cancelDeployment, killBuild and cleanQueues on a real Postgres. Two platforms:
// one without NATS (work that never reached an agent is ended in Postgres; an agent cannot
// be asked), one whose outbox relay publishes to a NATS server of this file, where a
// responder in the test answers control requests in the agent's wire format (the real agent
// answers them in apps/agent/src/control and in cancel.e2e.test.ts).
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { CANCEL_REASON, CONTROL_REQUEST_MAX_AGE_MS, CommandVerifier, KILL_BUILD_REASON, REMOVED_REASON, controlSubject } from '@skiff/domain';
import { CommandStatus, ControlReply, ControlRequest, DeploymentStatus, timestampFromDate } from '@skiff/proto';
import { startDedicatedNats, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';

let t: TestPlatform;
let env: string;
let projectId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'control' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const okWith = (p: () => TestPlatform) => async (op: string, input: Record<string, unknown>) => {
  const r = await p().call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};
const ok = okWith(() => t);

async function anApp(platform: TestPlatform, environmentId: string) {
  const call = okWith(() => platform);
  const a = await call('application.create', { name: 'web', environmentId });
  await call('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  return a as { applicationId: string; appName: string };
}

const commandsOf = async (platform: TestPlatform, applicationId: string) =>
  (await platform.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${applicationId}`).execute()).sort(
    (a, b) => Number(a.position) - Number(b.position),
  );
const deploymentsOf = async (platform: TestPlatform, applicationId: string) =>
  (await okWith(() => platform)('deployment.all', { applicationId })) as { deploymentId: string; status: string; reason: string | null }[];
const statusOf = async (platform: TestPlatform, applicationId: string) =>
  (await okWith(() => platform)('application.one', { applicationId })).applicationStatus as string;

/** What an agent reports, applied as the report server applies it. */
function agentReports(platform: TestPlatform) {
  const reports = new DeploymentReports({ db: platform.db, clock: () => new Date() });
  const sequences = new Map<string, number>();
  return {
    event: (deploymentId: string, commandId: string, status: DeploymentStatus, reason = '') => {
      const sequence = (sequences.get(deploymentId) ?? 0) + 1;
      sequences.set(deploymentId, sequence);
      return reports.applyEvent('local', {
        deploymentId,
        commandId,
        sequence: String(sequence),
        status,
        logLines: [],
        reason,
        occurredAt: timestampFromDate(new Date()),
      });
    },
    result: (commandId: string, status: CommandStatus, reason = '') =>
      reports.applyCommandResult('local', { commandId, status, reason, finishedAt: timestampFromDate(new Date()) }),
  };
}

describe('work that has not reached its server (no agent asked)', () => {
  it('cancelDeployment ends the queued deployment at once, and its command is never sent', async () => {
    const a = await anApp(t, env);
    const d = await ok('application.deploy', { applicationId: a.applicationId });
    expect(await ok('application.cancelDeployment', { applicationId: a.applicationId })).toEqual({ deploymentIds: [d.deploymentId] });
    const [deployment] = await deploymentsOf(t, a.applicationId);
    expect(deployment).toMatchObject({ status: 'cancelled', reason: CANCEL_REASON });
    const [command] = await commandsOf(t, a.applicationId);
    expect(command).toMatchObject({ status: 'failed', resultReason: CANCEL_REASON, publishedAt: null });
    expect(await statusOf(t, a.applicationId)).toBe('idle');

    const again = await t.call('application.cancelDeployment', { applicationId: a.applicationId });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe(`Nothing to cancel: no job of application ${a.appName} is queued or running`);
    // A late report of the agent (had it been sent) changes nothing.
    expect(await agentReports(t).result(command.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBe('duplicate');
  });

  it('killBuild cancels a queued deployment with its own reason, and refuses when the current job is not a deployment', async () => {
    const a = await anApp(t, env);
    const d = await ok('application.deploy', { applicationId: a.applicationId });
    expect(await ok('application.killBuild', { applicationId: a.applicationId })).toEqual({ deploymentIds: [d.deploymentId] });
    expect((await deploymentsOf(t, a.applicationId))[0]).toMatchObject({ status: 'cancelled', reason: KILL_BUILD_REASON });

    await ok('application.stop', { applicationId: a.applicationId });
    const refused = await t.call('application.killBuild', { applicationId: a.applicationId });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(`No build of application ${a.appName} runs: its current job is not a deployment`);
  });

  it('cleanQueues removes every waiting job: deployments end cancelled, a stop is dropped and the status stays', async () => {
    const a = await anApp(t, env);
    const d1 = await ok('application.deploy', { applicationId: a.applicationId });
    const d2 = await ok('application.redeploy', { applicationId: a.applicationId });
    await ok('application.stop', { applicationId: a.applicationId });
    expect(await ok('application.cleanQueues', { applicationId: a.applicationId })).toEqual({ deploymentIds: [d1.deploymentId, d2.deploymentId] });
    expect((await deploymentsOf(t, a.applicationId)).map((d) => [d.status, d.reason])).toEqual([
      ['cancelled', REMOVED_REASON],
      ['cancelled', REMOVED_REASON],
    ]);
    expect((await commandsOf(t, a.applicationId)).map((c) => [c.kind, c.status, c.resultReason])).toEqual([
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'failed', REMOVED_REASON],
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'failed', REMOVED_REASON],
      ['COMMAND_KIND_STOP_WORKLOAD', 'failed', REMOVED_REASON],
    ]);
    expect(await statusOf(t, a.applicationId)).toBe('idle');
    const again = await t.call('application.cleanQueues', { applicationId: a.applicationId });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe(`Nothing waits in the queue of application ${a.appName}`);
  });

  it('says the agent cannot be asked when the work has reached it, and changes nothing', async () => {
    const a = await anApp(t, env);
    await ok('application.deploy', { applicationId: a.applicationId });
    const [command] = await commandsOf(t, a.applicationId);
    await t.db.updateTable('commands').set({ status: 'published', publishedAt: new Date() }).where('id', '=', command.id).execute();
    for (const op of ['application.cancelDeployment', 'application.killBuild', 'application.cleanQueues']) {
      const r = await t.call(op, { applicationId: a.applicationId });
      expect(r.status, op).toBe(400);
      expect(r.body.message).toBe(
        'The agent of server local (the platform host) did not answer (the control plane runs without NATS); nothing was changed on it',
      );
    }
    expect((await commandsOf(t, a.applicationId))[0].status).toBe('published');
    expect((await deploymentsOf(t, a.applicationId))[0].status).toBe('queued');
  });
});

describe("the application's status when the agent reports a running deployment cancelled", () => {
  it('goes back to what the previous work left: nothing deployed → idle, a good deployment → done, a stop → idle, a failed one → error', async () => {
    const a = await anApp(t, env);
    const agent = agentReports(t);
    const deploy = async () => {
      const d = await ok('application.redeploy', { applicationId: a.applicationId });
      const command = (await commandsOf(t, a.applicationId)).at(-1)!;
      await agent.event(d.deploymentId, command.id, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING);
      expect(await statusOf(t, a.applicationId)).toBe('running');
      return { deploymentId: d.deploymentId as string, commandId: command.id };
    };
    const cancelled = async (run: { deploymentId: string; commandId: string }) => {
      await agent.event(run.deploymentId, run.commandId, DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED, CANCEL_REASON);
      await agent.result(run.commandId, CommandStatus.COMMAND_STATUS_CANCELLED, CANCEL_REASON);
      return statusOf(t, a.applicationId);
    };

    expect(await cancelled(await deploy())).toBe('idle');

    const good = await deploy();
    await agent.event(good.deploymentId, good.commandId, DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    await agent.result(good.commandId, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await cancelled(await deploy())).toBe('done');

    await ok('application.stop', { applicationId: a.applicationId });
    const stop = (await commandsOf(t, a.applicationId)).at(-1)!;
    await agent.result(stop.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await statusOf(t, a.applicationId)).toBe('idle');
    expect(await cancelled(await deploy())).toBe('idle');

    const bad = await deploy();
    await agent.event(bad.deploymentId, bad.commandId, DeploymentStatus.DEPLOYMENT_STATUS_ERROR, 'broken');
    expect(await cancelled(await deploy())).toBe('error');

    // Cancelled through its result alone (no event), the same.
    const byResult = await deploy();
    await agent.result(byResult.commandId, CommandStatus.COMMAND_STATUS_CANCELLED, CANCEL_REASON);
    expect(await statusOf(t, a.applicationId)).toBe('error');
    expect((await deploymentsOf(t, a.applicationId))[0]).toMatchObject({ deploymentId: byResult.deploymentId, status: 'cancelled', reason: CANCEL_REASON });
  });

  it('leaves it as it is when a stop, start or reload is cancelled (it did not fail)', async () => {
    const a = await anApp(t, env);
    const agent = agentReports(t);
    const d = await ok('application.deploy', { applicationId: a.applicationId });
    const deployCommand = (await commandsOf(t, a.applicationId))[0];
    await agent.event(d.deploymentId, deployCommand.id, DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    await agent.result(deployCommand.id, CommandStatus.COMMAND_STATUS_SUCCEEDED);
    await ok('application.stop', { applicationId: a.applicationId });
    const stop = (await commandsOf(t, a.applicationId)).at(-1)!;
    expect(await agent.result(stop.id, CommandStatus.COMMAND_STATUS_CANCELLED, REMOVED_REASON)).toBe('applied');
    expect(await statusOf(t, a.applicationId)).toBe('done');
  });
});

describe('access', () => {
  it('is that of application.deploy: members need the application granted, other organizations see nothing', async () => {
    const a = await anApp(t, env);
    await ok('application.deploy', { applicationId: a.applicationId });
    const member = await addMember(t, `control-${randomBytes(3).toString('hex')}@test.local`);
    const m = t.as(member.key);
    for (const op of ['application.cancelDeployment', 'application.killBuild', 'application.cleanQueues']) {
      expect((await m(op, { applicationId: a.applicationId })).status, op).toBe(403);
    }
    const other = await ok('organization.create', { name: 'Elsewhere' });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
    for (const op of ['application.cancelDeployment', 'application.killBuild', 'application.cleanQueues']) {
      expect((await t.as(key)(op, { applicationId: a.applicationId })).status, op).toBe(404);
    }
    expect((await deploymentsOf(t, a.applicationId))[0].status).toBe('queued');

    await ok('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [a.applicationId] });
    expect((await m('application.cancelDeployment', { applicationId: a.applicationId })).status).toBe(200);
  });
});

describe('work its agent holds (NATS request/reply)', () => {
  let p: TestPlatform;
  let nats: { url: string; stop: () => Promise<void> };
  let nc: NatsConnection;
  let responder: Subscription | null = null;
  let environmentId: string;
  const requests: ControlRequest[] = [];
  let answer: (request: ControlRequest) => ControlReply = () => ({ commandIds: [], error: 'not set' });

  beforeAll(async () => {
    nats = await startDedicatedNats();
    p = await startTestPlatform({ nats: { url: nats.url, pollMs: 100 } });
    nc = await connect({ servers: nats.url });
    environmentId = (await p.call('project.create', { name: 'held' })).body.environments[0].environmentId;
  });
  afterAll(async () => {
    await nc?.close();
    await p?.close();
    await nats?.stop();
  });

  /** The agent of server `local`, as far as control requests go: it carries out only those signed with the platform's command key. */
  async function answerAsAgent() {
    const verifier = CommandVerifier.fromText(p.platform.commandKey);
    responder ??= nc.subscribe(controlSubject('local'), {
      callback: (_err, msg) => {
        const refused = verifier.check(controlSubject('local'), msg.data, (name) => msg.headers?.get(name), { maxAgeMs: CONTROL_REQUEST_MAX_AGE_MS });
        if (refused !== null) {
          msg.respond(ControlReply.encode({ commandIds: [], error: `the agent refused the request: ${refused}` }).finish());
          return;
        }
        const request = ControlRequest.decode(msg.data);
        requests.push(request);
        msg.respond(ControlReply.encode(answer(request)).finish());
      },
    });
    await nc.flush();
  }

  async function published(applicationId: string, count: number) {
    const call = okWith(() => p);
    for (let i = 0; i < count; i++) await call(i === 0 ? 'application.deploy' : 'application.redeploy', { applicationId });
    return waitFor(
      async () => {
        const rows = await commandsOf(p, applicationId);
        return rows.length === count && rows.every((c) => c.status === 'published') ? rows : null;
      },
      { timeoutMs: 10_000, what: 'the relay to publish the commands' },
    );
  }

  it('settles at once, when none listens, a command no agent received (unreceived-work.int.test.ts has the rest)', async () => {
    const a = await anApp(p, environmentId);
    const [command] = await published(a.applicationId, 1);
    expect(await okWith(() => p)('application.cancelDeployment', { applicationId: a.applicationId })).toEqual({ deploymentIds: [command.deploymentId] });
    expect((await deploymentsOf(p, a.applicationId))[0].status).toBe('cancelled');
  });

  it("asks the agent to cancel the workload's running command, and answers its deployment (the agent's reports end it)", async () => {
    await answerAsAgent();
    const a = await anApp(p, environmentId);
    const [command] = await published(a.applicationId, 1);
    answer = () => ({ commandIds: [command.id], error: '' });
    requests.length = 0;

    expect(await okWith(() => p)('application.cancelDeployment', { applicationId: a.applicationId })).toEqual({ deploymentIds: [command.deploymentId] });
    expect(await okWith(() => p)('application.killBuild', { applicationId: a.applicationId })).toEqual({ deploymentIds: [command.deploymentId] });
    // Naming the command (and deployment) the control plane sees as current.
    const named = { workloadKey: `application:${a.applicationId}`, deploymentId: command.deploymentId, commandId: command.id };
    expect(requests).toEqual([
      { request: { $case: 'cancelWorkload', value: { ...named, buildOnly: false } } },
      { request: { $case: 'cancelWorkload', value: { ...named, buildOnly: true } } },
    ]);
    // Until the agent reports, the deployment is what the agent last said.
    expect((await deploymentsOf(p, a.applicationId))[0].status).toBe('queued');

    answer = () => ({ commandIds: [], error: `the deployment of application:${a.applicationId} is past its build: its rollout runs` });
    const refused = await p.call('application.killBuild', { applicationId: a.applicationId });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(
      `Nothing was cancelled for application ${a.appName}: the agent of server local (the platform host) says the deployment of application:${a.applicationId} is past its build: its rollout runs`,
    );
  });

  it('cleanQueues asks the agent to drop what waits, and ends what it dropped at once', async () => {
    await answerAsAgent();
    const a = await anApp(p, environmentId);
    const [first, second, third] = await published(a.applicationId, 3);
    answer = () => ({ commandIds: [second.id, third.id], error: '' });
    requests.length = 0;
    expect(await okWith(() => p)('application.cleanQueues', { applicationId: a.applicationId })).toEqual({
      deploymentIds: [second.deploymentId, third.deploymentId],
    });
    expect(requests).toEqual([
      { request: { $case: 'cleanQueue', value: { workloadKey: `application:${a.applicationId}`, commandIds: [first.id, second.id, third.id] } } },
    ]);
    const byId = new Map((await deploymentsOf(p, a.applicationId)).map((d) => [d.deploymentId, d]));
    expect(byId.get(first.deploymentId!)?.status).toBe('queued');
    expect(byId.get(second.deploymentId!)).toMatchObject({ status: 'cancelled', reason: REMOVED_REASON });
    expect(byId.get(third.deploymentId!)).toMatchObject({ status: 'cancelled', reason: REMOVED_REASON });
    // The agent's own reports of them come later and change nothing.
    expect(await agentReports(p).result(second.id, CommandStatus.COMMAND_STATUS_CANCELLED, REMOVED_REASON)).toBe('duplicate');

    answer = () => ({ commandIds: [], error: `no command of application:${a.applicationId} waits in the queue` });
    const none = await p.call('application.cleanQueues', { applicationId: a.applicationId });
    expect(none.status).toBe(400);
    expect(none.body.message).toBe(
      `Nothing waits in the queue of application ${a.appName}: the agent of server local (the platform host) says no command of application:${a.applicationId} waits in the queue`,
    );
  });

  it("ignores the ids of an agent's answer that are not the workload's", async () => {
    await answerAsAgent();
    const a = await anApp(p, environmentId);
    const b = await anApp(p, environmentId);
    const [mine, waiting] = await published(a.applicationId, 2);
    const [theirs] = await published(b.applicationId, 1);

    // An answer naming another application's command: it is neither answered nor ended.
    answer = () => ({ commandIds: [mine.id, theirs.id], error: '' });
    expect(await okWith(() => p)('application.cancelDeployment', { applicationId: a.applicationId })).toEqual({ deploymentIds: [mine.deploymentId] });
    answer = () => ({ commandIds: [waiting.id, theirs.id], error: '' });
    expect(await okWith(() => p)('application.cleanQueues', { applicationId: a.applicationId })).toEqual({ deploymentIds: [waiting.deploymentId] });
    expect((await commandsOf(p, a.applicationId)).map((c) => c.status)).toEqual(['published', 'failed']);
    expect((await commandsOf(p, b.applicationId)).map((c) => [c.status, c.resultReason])).toEqual([['published', null]]);
    expect((await deploymentsOf(p, b.applicationId)).map((d) => d.status)).toEqual(['queued']);
  });
});
