// Retention of deployment records (issue 13): a workload keeps its newest N ended
// deployments with their logs, never one queued or running, nor its newest `done` one; the
// older ones go when a deployment ends, in the transaction that records the end.
import { CommandStatus, DeploymentStatus, timestampFromDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sentSpec } from '../../testing/sent-spec.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { Command } from '@skiff/proto';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const KEEP = 3;

let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform({ keepDeployments: KEEP });
  env = (await t.call('project.create', { name: 'retention' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

async function containerApp() {
  const app = await ok('application.create', { name: 'web', environmentId: env });
  await ok('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  return app as { applicationId: string };
}

/** Deploys the application; answers the deployment and its command. */
async function deploy(applicationId: string) {
  const { deploymentId } = await ok('application.deploy', { applicationId });
  const command = await t.db.selectFrom('commands').select('id').where('deploymentId', '=', deploymentId).executeTakeFirstOrThrow();
  return { deploymentId: deploymentId as string, commandId: command.id };
}

/** The agent's events for the deployment: running with a log line, then `end` (none: left running). */
async function run(d: { deploymentId: string; commandId: string }, end?: 'done' | 'error') {
  const event = (sequence: number, status: DeploymentStatus, text: string) =>
    t.platform.reports.applyEvent('local', {
      deploymentId: d.deploymentId,
      commandId: d.commandId,
      sequence: String(sequence),
      status,
      logLines: [{ text, time: undefined }],
      reason: '',
      occurredAt: timestampFromDate(new Date()),
    });
  expect(await event(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING, `log of ${d.deploymentId}`)).toBe('applied');
  if (end === 'done') expect(await event(2, DeploymentStatus.DEPLOYMENT_STATUS_DONE, 'done')).toBe('applied');
  if (end === 'error') expect(await event(2, DeploymentStatus.DEPLOYMENT_STATUS_ERROR, 'failed')).toBe('applied');
}

const stored = async (applicationId: string) =>
  (await t.db.selectFrom('deployments').select(['id', 'status', 'log']).where('applicationId', '=', applicationId).execute()).map((d) => d.id).sort();

describe('deployment retention', () => {
  it(`keeps the newest ${KEEP} ended deployments of an application (with their logs), and the running and queued ones`, async () => {
    const app = await containerApp();
    const ended: string[] = [];
    for (let i = 0; i < KEEP + 3; i++) {
      const d = await deploy(app.applicationId);
      await run(d, 'done');
      ended.push(d.deploymentId);
    }
    const newest = ended.slice(-KEEP);
    expect(await stored(app.applicationId)).toEqual([...newest].sort());
    // deployment.all: the newest N, newest first.
    const all = (await ok('deployment.all', { applicationId: app.applicationId })) as { deploymentId: string }[];
    expect(all.map((d) => d.deploymentId)).toEqual([...newest].reverse());
    // A pruned deployment's log is gone with it; a kept one's is there.
    expect((await t.call('deployment.readLogs', { deploymentId: ended[0] })).status).toBe(404);
    expect((await ok('deployment.readLogs', { deploymentId: newest[0] })).log).toContain(`log of ${newest[0]}`);

    // A running and a queued deployment are never pruned, however many end after them.
    const running = await deploy(app.applicationId);
    await run(running);
    const queued = await deploy(app.applicationId);
    // (The queued one's command is cancelled by nobody here: it stays queued.)
    const later: string[] = [];
    for (let i = 0; i < KEEP + 1; i++) {
      const d = await deploy(app.applicationId);
      await run(d, 'done');
      later.push(d.deploymentId);
    }
    expect(await stored(app.applicationId)).toEqual([running.deploymentId, queued.deploymentId, ...later.slice(-KEEP)].sort());
  });

  it("keeps a preview's deployments apart: neither counts toward the other's newest N", async () => {
    const app = await containerApp();
    const previewId = `prv_ret_${app.applicationId}`;
    await t.db
      .insertInto('previewDeployments')
      .values({ id: previewId, applicationId: app.applicationId, appName: `preview-ret-${app.applicationId.slice(-6)}`, branch: 'f', pullRequestId: previewId, pullRequestNumber: '1', pullRequestUrl: '', pullRequestTitle: 'f' })
      .execute();
    const previewRow = (i: number, status: 'done' | 'running') =>
      t.db
        .insertInto('deployments')
        .values({ id: `dep_prv_${i}_${app.applicationId}`, applicationId: app.applicationId, serverId: 'local', status, title: 'Preview', description: null, reason: null, startedAt: new Date(), finishedAt: status === 'done' ? new Date(Date.now() - 60_000 + i) : null, previewDeploymentId: previewId, createdAt: new Date(Date.now() - 60_000 + i) })
        .returning('id')
        .executeTakeFirstOrThrow();
    const previews = async () => (await t.db.selectFrom('deployments').select('id').where('previewDeploymentId', '=', previewId).execute()).map((d) => d.id).sort();
    const own = async () => (await t.db.selectFrom('deployments').select('id').where('applicationId', '=', app.applicationId).where('previewDeploymentId', 'is', null).execute()).map((d) => d.id).sort();
    const older: string[] = [];
    for (let i = 0; i < KEEP + 2; i++) older.push((await previewRow(i, 'done')).id);

    const parent: string[] = [];
    for (let i = 0; i < KEEP + 1; i++) {
      const d = await deploy(app.applicationId);
      await run(d, 'done');
      parent.push(d.deploymentId);
    }
    expect(await own()).toEqual(parent.slice(-KEEP).sort());
    expect(await previews()).toEqual([...older].sort());

    // A preview deployment's end prunes its preview's, and leaves the parent's.
    const latest = (await previewRow(KEEP + 2, 'running')).id;
    const applied = await t.platform.reports.applyEvent('local', {
      deploymentId: latest, commandId: 'cmd_none', sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_DONE, logLines: [], reason: '', occurredAt: timestampFromDate(new Date()),
    });
    expect(applied).toBe('applied');
    expect(await previews()).toEqual([...older.slice(-(KEEP - 1)), latest].sort());
    expect(await own()).toEqual(parent.slice(-KEEP).sort());
  });

  it('keeps the newest done deployment when the newer ones failed (a rollback may need it)', async () => {
    const app = await containerApp();
    const good = await deploy(app.applicationId);
    await run(good, 'done');
    const failed: string[] = [];
    for (let i = 0; i < KEEP + 2; i++) {
      const d = await deploy(app.applicationId);
      await run(d, 'error');
      failed.push(d.deploymentId);
    }
    expect(await stored(app.applicationId)).toEqual([good.deploymentId, ...failed.slice(-KEEP)].sort());
  });

  it('prunes when a command result ends the deployment, and forceUpdate keeps growing past the pruned records', async () => {
    const app = await containerApp();
    const deployments: string[] = [];
    for (let i = 0; i < KEEP + 2; i++) {
      const d = await deploy(app.applicationId);
      // No events: the agent's failed result ends the deployment (deployment-result.ts).
      await t.platform.reports.applyCommandResult('local', { commandId: d.commandId, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'boom', finishedAt: undefined });
      deployments.push(d.deploymentId);
    }
    expect(await stored(app.applicationId)).toEqual(deployments.slice(-KEEP).sort());
    const next = await deploy(app.applicationId);
    const row = await t.db.selectFrom('commands').select('payload').where('id', '=', next.commandId).executeTakeFirstOrThrow();
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    if (command.payload?.$case !== 'deployApplication') throw new Error('not a deploy');
    // The sixth deploy: a count of the records left (3) would have made it 4, the same as before.
    expect(sentSpec(command.payload.value).forceUpdate).toBe(KEEP + 3);
  });
});
