// Retention of ended commands (issue 13): the relay's pass deletes, at most once an hour,
// the commands that ended longer ago than the retention (their payloads hold sealed
// secrets), but keeps what later reads need: per workload and kind, the newest command and
// the newest that succeeded. The cache's deploys behave as before (forceUpdate is a counter).
import { connect } from '@nats-io/transport-node';
import { CommandSigner } from '@skiff/domain';
import { Command, CommandStatus, WorkloadKind } from '@skiff/proto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { sentSpec } from '../../testing/sent-spec.js';
import { CommandOutbox } from './outbox.js';
import { OutboxRelay } from './outbox-relay.js';
import { pruneEndedCommands, workReachedAgent } from './command-records.js';

const DAY = 24 * 3600_000;
let now = Date.parse('2026-11-01T00:00:00Z');
const clock = () => new Date(now);

let t: TestPlatform;
let env: string;
let relay: OutboxRelay;
beforeAll(async () => {
  t = await startTestPlatform({ clock });
  env = (await t.call('project.create', { name: 'command-retention' })).body.environments[0].environmentId;
  relay = new OutboxRelay({
    db: t.db,
    outbox: new CommandOutbox(t.platform.secrets),
    signer: CommandSigner.generate(),
    connect: () => connect({ servers: inject('natsUrl') }),
    clock,
    log: pino({ level: 'silent' }),
    commandRetentionMs: 7 * DAY,
    endUnpublishable: async () => {},
  });
});
afterAll(async () => {
  await relay?.stop();
  await t?.close();
});

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

const commandsOf = async (cacheId: string) =>
  (await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `cache:${cacheId}`).execute()).sort((a, b) => Number(a.position) - Number(b.position));

/** Ends every unfinished command of the cache as its agent would: succeeded, or `status`. */
async function endAll(cacheId: string, status = CommandStatus.COMMAND_STATUS_SUCCEEDED) {
  for (const c of await commandsOf(cacheId)) {
    if (c.status === 'pending' || c.status === 'published') {
      expect(await t.platform.reports.applyCommandResult('local', { commandId: c.id, status, reason: '', finishedAt: undefined })).toBe('applied');
    }
  }
}

const deployOf = (row: { payload: string }) => {
  const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
  if (command.payload?.$case !== 'deployApplication') throw new Error(`not a deploy: ${command.payload?.$case}`);
  return { deploy: command.payload.value, spec: sentSpec(command.payload.value) };
};

describe('ended commands', () => {
  it('are deleted after the retention but the newest of each kind, and the cache deploys as before', async () => {
    const c = (await ok('cache.create', { name: 'sessions', databasePassword: 'pw-1234567', environmentId: env, serverId: null })) as { cacheId: string; appName: string };
    await ok('cache.deploy', { cacheId: c.cacheId });
    await endAll(c.cacheId);
    await ok('cache.deploy', { cacheId: c.cacheId });
    await endAll(c.cacheId, CommandStatus.COMMAND_STATUS_FAILED);
    await ok('cache.deploy', { cacheId: c.cacheId });
    await endAll(c.cacheId);
    await ok('cache.stop', { cacheId: c.cacheId });
    await endAll(c.cacheId);
    const before = await commandsOf(c.cacheId);
    expect(before.map((r) => [r.kind, r.status])).toEqual([
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'done'],
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'failed'],
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'done'],
      ['COMMAND_KIND_STOP_WORKLOAD', 'done'],
    ]);

    // Within the retention: nothing goes.
    now += 6 * DAY;
    await relay.pass();
    expect((await commandsOf(c.cacheId)).map((r) => r.id)).toEqual(before.map((r) => r.id));

    // Past it (and more than an hour after the last prune): they go.
    now += 2 * DAY;
    await relay.pass();
    const after = await commandsOf(c.cacheId);
    // The first two deploys go (the older done one and the failed one); the newest deploy and the stop stay.
    expect(after.map((r) => r.id)).toEqual([before[2]!.id, before[3]!.id]);
    const left = after.length;
    // Another pass within the hour does not prune again (nothing more to prune anyway, no error).
    await relay.pass();
    expect(await commandsOf(c.cacheId)).toHaveLength(left);

    // The cache still counts as deployed, and its next deploy is the fourth: forceUpdate 4
    // (a count of the deploy rows left would give 2).
    await ok('cache.start', { cacheId: c.cacheId });
    await endAll(c.cacheId);
    await ok('cache.deploy', { cacheId: c.cacheId });
    const rows = await commandsOf(c.cacheId);
    expect(deployOf(rows.at(-1)!).spec.forceUpdate).toBe(4);
    await endAll(c.cacheId);

    // A rename is still seen from the newest deploy's payload: the old service is removed first.
    await ok('cache.update', { cacheId: c.cacheId, appName: `${c.appName}-renamed` });
    await ok('cache.deploy', { cacheId: c.cacheId });
    const renamed = (await commandsOf(c.cacheId)).slice(-2);
    expect(renamed.map((r) => r.kind)).toEqual(['COMMAND_KIND_REMOVE_WORKLOAD', 'COMMAND_KIND_DEPLOY_APPLICATION']);
    expect(deployOf(renamed[1]!).deploy.workload).toEqual({ kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: c.cacheId, appName: `${c.appName}-renamed` });
    expect(deployOf(renamed[1]!).spec.forceUpdate).toBe(5);
    await endAll(c.cacheId);

    // cache.rebuild: a remove and a deploy, forceUpdate 6.
    await ok('cache.rebuild', { cacheId: c.cacheId });
    const rebuilt = (await commandsOf(c.cacheId)).slice(-2);
    expect(rebuilt.map((r) => r.kind)).toEqual(['COMMAND_KIND_REMOVE_WORKLOAD', 'COMMAND_KIND_DEPLOY_APPLICATION']);
    expect(deployOf(rebuilt[1]!).spec.forceUpdate).toBe(6);
    await endAll(c.cacheId);
  });
});

describe('what a delete needs of ended commands', () => {
  it('keeps the newest command its agent had, so the workload still counts as having reached it', async () => {
    const key = 'application:app_retained';
    const row = (id: string, neverReceived: boolean, daysAgo: number) => ({
      id,
      serverId: 'local',
      kind: 'COMMAND_KIND_DEPLOY_APPLICATION',
      workloadKey: key,
      payload: 'sealed',
      deadline: new Date(now - daysAgo * DAY),
      status: 'failed' as const,
      finishedAt: new Date(now - daysAgo * DAY),
      neverReceived,
    });
    // A deploy the agent ran (and failed), then two it never received.
    await t.db.insertInto('commands').values([row('cmd_had', false, 30), row('cmd_never1', true, 29), row('cmd_never2', true, 28)]).execute();
    await pruneEndedCommands(t.db, new Date(now - 7 * DAY));
    const left = await t.db.selectFrom('commands').select('id').where('workloadKey', '=', key).orderBy('position').execute();
    expect(left.map((r) => r.id)).toEqual(['cmd_had', 'cmd_never2']);
    expect(await workReachedAgent(t.db, key)).toBe(true);
  });
});
