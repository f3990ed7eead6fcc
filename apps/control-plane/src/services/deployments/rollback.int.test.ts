// Rollbacks and crash loop reports on real Postgres (no agent: its events are applied as the
// report server applies them): what deployment.rollback queues and refuses, which images
// deploys keep, and what a crash loop report changes, for which server.
import { randomBytes } from 'node:crypto';
import { Command, DeploymentStatus, timestampFromDate, type DeployApplication } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtImageName } from '../../agents/outbound/kinds/deploy-application.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CrashLoops, type CrashLoopEvent } from './crash-loops.js';
import { recordCrashLoop } from '../events/index.js';

let t: TestPlatform;
let env: string;
let crashLoops: CrashLoops;
const events: CrashLoopEvent[] = [];
beforeAll(async () => {
  t = await startTestPlatform({ rollback: { keepImages: 2 } });
  env = (await t.call('project.create', { name: 'rollback' })).body.environments[0].environmentId;
  const deps = { db: t.db, ids: (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`, clock: () => new Date(), secrets: t.platform.secrets, onAccessChange: () => {}, rollbackImages: 2 };
  crashLoops = new CrashLoops(deps, new CommandOutbox(t.platform.secrets), { onCrashLoop: async (e) => void events.push(e), log: pino({ level: 'silent' }) });
});
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

async function app(settings: Record<string, unknown> = {}) {
  const created = await ok('application.create', { name: 'web', environmentId: env });
  await ok('application.saveContainerProvider', { applicationId: created.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  if (Object.keys(settings).length > 0) await ok('application.update', { applicationId: created.applicationId, ...settings });
  return created as { applicationId: string; appName: string };
}

/** The deploy the command of `deploymentId` carries. */
async function sent(deploymentId: string): Promise<DeployApplication> {
  const row = await t.db.selectFrom('commands').select('payload').where('deploymentId', '=', deploymentId).executeTakeFirstOrThrow();
  const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
  if (command.payload?.$case !== 'deployApplication') throw new Error('not a deploy');
  return command.payload.value;
}

/** Ends the deployment as its agent would report it. */
async function end(deploymentId: string, status: 'done' | 'error') {
  const command = await t.db.selectFrom('commands').select('id').where('deploymentId', '=', deploymentId).executeTakeFirstOrThrow();
  const final = status === 'done' ? DeploymentStatus.DEPLOYMENT_STATUS_DONE : DeploymentStatus.DEPLOYMENT_STATUS_ERROR;
  for (const [sequence, s] of [[1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING], [2, final]] as const) {
    const applied = await t.platform.reports.applyEvent('local', {
      deploymentId,
      commandId: command.id,
      sequence: String(sequence),
      status: s,
      logLines: [],
      reason: s === DeploymentStatus.DEPLOYMENT_STATUS_ERROR ? 'failed' : '',
      occurredAt: timestampFromDate(new Date()),
    });
    expect(applied).toBe('applied');
  }
}

/** A deploy, ended `status`; `built`: recorded as the agent's build of it (`<appName>:<deploymentId>`). */
async function deployed(a: { applicationId: string; appName: string }, status: 'done' | 'error' = 'done', built = false) {
  const { deploymentId } = await ok('application.deploy', { applicationId: a.applicationId });
  if (built) await t.db.updateTable('deployments').set({ image: builtImageName(a.appName, deploymentId) }).where('id', '=', deploymentId).execute();
  await end(deploymentId, status);
  return deploymentId as string;
}

const refusal = async (deploymentId: string) => {
  const r = await t.call('deployment.rollback', { deploymentId });
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  return r.body.issues;
};

describe('deployment.rollback', () => {
  it('queues a new Rollback deployment running the earlier image, with today\'s settings', async () => {
    const a = await app();
    const first = await deployed(a);
    await ok('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:1.36', username: null, password: null, registryUrl: null });
    await deployed(a);
    expect((await sent(first)).image).toBe('busybox:latest');

    const back = await ok('deployment.rollback', { deploymentId: first });
    expect(back).toMatchObject({ status: 'queued', title: 'Rollback', applicationId: a.applicationId, description: `Rollback to deployment ${first}` });
    const deploy = await sent(back.deploymentId);
    expect(deploy).toMatchObject({ image: 'busybox:latest', localImage: false, keepImages: [] });
    expect(deploy.source).toBeUndefined();
  });

  it('refuses a deployment that is not done, one of another organization, and a built image no longer kept', async () => {
    const a = await app();
    const failed = await deployed(a, 'error');
    expect(await refusal(failed)).toEqual([{ path: ['deploymentId'], message: 'only a done deployment can be rolled back to (this one is error)' }]);

    const b = await app();
    const oldest = await deployed(b, 'done', true);
    await deployed(b, 'done', true);
    await deployed(b, 'done', true);
    // rollbackActive off: the agent keeps what the service runs and ran before only.
    expect((await refusal(oldest))[0].message).toMatch(/^the image of this deployment is gone/);

    const other = await ok('organization.create', { name: 'Elsewhere' });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
    expect((await t.as(key)('deployment.rollback', { deploymentId: oldest })).status).toBe(404);
  });

  it('keeps the newest done deployments\' built images with rollbackActive, and rolls back to them from the server\'s copy', async () => {
    const a = await app({ rollbackActive: true });
    const d1 = await deployed(a, 'done', true);
    const d2 = await deployed(a, 'done', true);
    const d3 = await deployed(a, 'done', true);
    const { deploymentId } = await ok('application.deploy', { applicationId: a.applicationId });
    // SKIFF_ROLLBACK_KEEP_IMAGES is 2 here: the images of d3 and d2.
    expect((await sent(deploymentId)).keepImages.sort()).toEqual([builtImageName(a.appName, d2), builtImageName(a.appName, d3)].sort());
    await end(deploymentId, 'done');

    expect((await refusal(d1))[0].message).toMatch(/^the image of this deployment is gone/);
    const back = await ok('deployment.rollback', { deploymentId: d3 });
    expect(await sent(back.deploymentId)).toMatchObject({ image: builtImageName(a.appName, d3), localImage: true });
  });
});

describe('crash loop reports', () => {
  const report = (workloadId: string, deploymentId: string) => ({
    workloadId,
    deploymentId,
    exits: 3,
    windowSeconds: 120,
    reason: 'task 1 failed: non-zero exit (1)',
    logLines: ['starting', 'boom'],
    detectedAt: timestampFromDate(new Date()),
  });
  const statusOf = async (applicationId: string) => (await ok('application.one', { applicationId })).applicationStatus;

  it('marks the application error and calls onCrashLoop; another server\'s report changes nothing', async () => {
    const a = await app();
    const d = await deployed(a);
    expect(await crashLoops.apply('srv_other', report(a.applicationId, d))).toBeNull();
    expect(await statusOf(a.applicationId)).toBe('done');

    const event = await crashLoops.apply('local', report(a.applicationId, d));
    expect(event).toEqual({
      applicationId: a.applicationId,
      appName: a.appName,
      serverId: null,
      deploymentId: d,
      exits: 3,
      windowSeconds: 120,
      reason: 'task 1 failed: non-zero exit (1)',
      logLines: ['starting', 'boom'],
      rollback: null,
    });
    expect(events.at(-1)).toEqual(event);
    expect(await statusOf(a.applicationId)).toBe('error');

    // Its event (what the composition root records by default): appBuildError with the last lines.
    await recordCrashLoop(t.db, event!);
    const recorded = await t.db.selectFrom('events').selectAll().where('workloadId', '=', a.applicationId).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(recorded).toMatchObject({ kind: 'appBuildError', outcome: 'failure', workloadKind: 'application', workloadName: 'web' });
    expect(recorded.summary).toMatchObject({ deploymentId: d, status: 'crash loop', reason: 'task 1 failed: non-zero exit (1); last lines:\nstarting\nboom' });
  });

  it('with rollbackActive, queues one rollback to the previous done deployment, and none for a rollback that crashes', async () => {
    const a = await app({ rollbackActive: true });
    const good = await deployed(a);
    const bad = await deployed(a);
    const event = await crashLoops.apply('local', report(a.applicationId, bad));
    const rollbackId = (event!.rollback as { deploymentId: string }).deploymentId;
    expect((await sent(rollbackId)).image).toBe((await sent(good)).image);
    expect((await t.db.selectFrom('deployments').select('title').where('id', '=', rollbackId).executeTakeFirstOrThrow()).title).toBe('Rollback');

    // The same report again (an agent restarted): no second rollback.
    expect((await crashLoops.apply('local', report(a.applicationId, bad)))!.rollback).toEqual({ none: 'a newer deployment was queued since' });
    await end(rollbackId, 'done');
    expect((await crashLoops.apply('local', report(a.applicationId, rollbackId)))!.rollback).toEqual({ none: 'the crashing deployment is a rollback itself' });
    const all = await t.db.selectFrom('deployments').select('id').where('applicationId', '=', a.applicationId).execute();
    expect(all).toHaveLength(3);
  });
});
