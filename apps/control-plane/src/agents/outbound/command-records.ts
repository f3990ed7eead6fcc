import type { Db } from '@skiff/db';
import { sql } from 'kysely';
import { CommandKind, commandKindToJSON } from '@skiff/proto';

/**
 * Reads and status changes of the `commands` rows (the outbox), for everyone but the outbox
 * itself (which writes new rows) and its relay (which publishes them): the services' checks
 * (is a removal under way, was it ever deployed, what is queued), the ending of commands that
 * will never run, and the recording of results. The SQL on `commands` lives in agents/outbound.
 */

const DEPLOY_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_DEPLOY_APPLICATION);
const REMOVE_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_REMOVE_WORKLOAD);
const STOP_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_STOP_WORKLOAD);
const START_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_START_WORKLOAD);

/** Statuses of a command that has not ended: waiting in the outbox, or sent to its agent. */
const UNFINISHED = ['pending', 'published'] as const;

/** Whether a remove command of the workload waits or runs (the delete is under way). */
export async function removalPending(db: Db, workloadKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', workloadKey)
    .where('kind', '=', REMOVE_KIND)
    .where('status', 'in', UNFINISHED)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the workload is being removed: its newest command is a remove that has not ended. */
export async function newestIsPendingRemoval(db: Db, workloadKey: string): Promise<boolean> {
  const newest = await db
    .selectFrom('commands')
    .select(['id', 'kind', 'status'])
    .where('workloadKey', '=', workloadKey)
    .orderBy('position', 'desc')
    .limit(1)
    .executeTakeFirst();
  return newest !== undefined && newest.kind === REMOVE_KIND && (newest.status === 'pending' || newest.status === 'published');
}

/**
 * The newest DeployApplication command's (sealed) payload of the workload, null when none was
 * queued. (How many were queued is a counter on the record: pruning keeps only the newest.)
 */
export async function deploysOf(db: Db, workloadKey: string): Promise<{ newestPayload: string | null }> {
  const newest = await db
    .selectFrom('commands')
    .select('payload')
    .where('workloadKey', '=', workloadKey)
    .where('kind', '=', DEPLOY_KIND)
    .orderBy('position', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { newestPayload: newest?.payload ?? null };
}

/** Whether a DeployApplication command of the workload was ever queued. */
export async function deployWasQueued(db: Db, workloadKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', workloadKey)
    .where('kind', '=', DEPLOY_KIND)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether a command of the workload was queued after the one at `position`. */
export async function laterCommandExists(db: Db, workloadKey: string, position: string | number): Promise<boolean> {
  const later = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', workloadKey)
    .where('position', '>', String(position))
    .limit(1)
    .executeTakeFirst();
  return later !== undefined;
}

/** The newest stop or start of the workload that succeeded, and when it finished. */
export async function lastStopOrStart(db: Db, workloadKey: string): Promise<{ stopped: boolean; finishedAt: Date } | undefined> {
  const row = await db
    .selectFrom('commands')
    .select(['kind', 'finishedAt'])
    .where('workloadKey', '=', workloadKey)
    .where('kind', 'in', [STOP_KIND, START_KIND])
    .where('status', '=', 'done')
    .where('finishedAt', 'is not', null)
    .orderBy('finishedAt', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && { stopped: row.kind === STOP_KIND, finishedAt: row.finishedAt! };
}

/**
 * Whether a command of the workload ended after its agent had it (or may have had it): one
 * that ended other than by the control plane before it reached the agent. Pruning keeps the
 * newest such command of each workload, so the answer survives it.
 */
export async function workReachedAgent(db: Db, workloadKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', workloadKey)
    .where('status', 'in', ENDED)
    .where('neverReceived', '=', false)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export interface UnfinishedCommand {
  id: string;
  serverId: string;
  kind: string;
  workloadKey: string;
  deploymentId: string | null;
  status: 'pending' | 'published' | 'done' | 'failed';
}

/** The workload's commands without a result, in queue order. */
export function unfinishedCommands(db: Db, workloadKey: string): Promise<UnfinishedCommand[]> {
  return db
    .selectFrom('commands')
    .select(['id', 'serverId', 'kind', 'workloadKey', 'deploymentId', 'status'])
    .where('workloadKey', '=', workloadKey)
    .where('status', 'in', UNFINISHED)
    .orderBy('position')
    .execute();
}

/** Where an agent's answer may end commands: the workload asked about, on the server asked. */
export interface CommandScope {
  workloadKey: string;
  serverId: string;
}

/** The deployments of these commands, among those of `scope` only, in queue order. */
export async function deploymentsOfCommands(db: Db, commandIds: string[], scope: CommandScope): Promise<string[]> {
  if (commandIds.length === 0) return [];
  const rows = await db
    .selectFrom('commands')
    .select('deploymentId')
    .where('id', 'in', commandIds)
    .where('workloadKey', '=', scope.workloadKey)
    .where('serverId', '=', scope.serverId)
    .orderBy('position')
    .execute();
  return rows.flatMap((r) => (r.deploymentId ? [r.deploymentId] : []));
}

/**
 * Inside a transaction: ends a command that will never run (failed, with the reason), if it
 * belongs to `scope` and has the status `which` allows (`pending`: only if still unpublished,
 * the row lock ordering this against the relay; `held`: pending or published). Answers the
 * ended command's deployment id (null when it has none), or undefined when nothing was ended.
 */
export async function endUnrunCommand(
  tx: Db,
  id: string,
  scope: CommandScope,
  which: 'pending' | 'held',
  reason: string,
  at: Date,
): Promise<{ deploymentId: string | null } | undefined> {
  const c = await tx
    .selectFrom('commands')
    .select(['id', 'deploymentId'])
    .where('id', '=', id)
    .where('workloadKey', '=', scope.workloadKey)
    .where('serverId', '=', scope.serverId)
    .where('status', 'in', which === 'pending' ? ['pending'] : UNFINISHED)
    .forUpdate()
    .executeTakeFirst();
  if (!c) return undefined;
  // A pending one was never published: its agent never had it.
  const neverReceived = which === 'pending';
  await tx.updateTable('commands').set({ status: 'failed', finishedAt: at, resultReason: reason, neverReceived }).where('id', '=', id).execute();
  return { deploymentId: c.deploymentId };
}

/** A command's row, locked for the rest of the transaction (a result being recorded). */
export function lockCommand(tx: Db, commandId: string) {
  return tx.selectFrom('commands').selectAll().where('id', '=', commandId).forUpdate().executeTakeFirst();
}

/** The server, workload and kind of a command. */
export function commandOf(db: Db, commandId: string) {
  return db.selectFrom('commands').select(['serverId', 'workloadKey', 'kind']).where('id', '=', commandId).executeTakeFirst();
}

/** Records how a command ended: done, or failed with its reason. */
export async function recordCommandEnd(tx: Db, commandId: string, end: { succeeded: boolean; at: Date; reason: string | null }): Promise<void> {
  await tx
    .updateTable('commands')
    .set({ status: end.succeeded ? 'done' : 'failed', finishedAt: end.at, resultReason: end.reason })
    .where('id', '=', commandId)
    .execute();
}

/** Commands whose deadline passed before any result, oldest first. */
export function overdueCommands(db: Db, now: Date) {
  return db
    .selectFrom('commands')
    .select(['id', 'serverId'])
    .where('status', 'in', UNFINISHED)
    .where('deadline', '<', now)
    .orderBy('position')
    .execute();
}

/** Statuses of a command that ended (succeeded, or failed, cancelled, expired, rejected). */
const ENDED = ['done', 'failed'] as const;

/**
 * Deletes the commands that ended before `before` (their payloads hold sealed secrets), but
 * for each workload and kind the newest command (by position) and the newest one that
 * succeeded (by finishedAt): what the reads above need of ended commands. newestIsPendingRemoval
 * and laterCommandExists look at the workload's newest command (kept: the newest of its
 * kind); deploysOf and deployWasQueued at the newest deploy (kept); lastStopOrStart at the
 * latest successful stop or start (kept: the newest succeeded of each kind); the others read
 * unfinished commands only, or a command by id while its result is recorded (unfinished);
 * workReachedAgent at the newest command its agent had (kept).
 * Answers how many were deleted.
 */
export async function pruneEndedCommands(db: Db, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('commands')
    .where('status', 'in', ENDED)
    .where('finishedAt', '<', before)
    .where('id', 'not in', (eb) =>
      eb
        .selectFrom(
          eb
            .selectFrom('commands')
            .select([
              'id',
              sql<string>`row_number() over (partition by workload_key, kind order by position desc)`.as('newest'),
              sql<string>`row_number() over (partition by workload_key, kind, (status = 'done') order by finished_at desc nulls last, position desc)`.as('newestDone'),
              sql<string>`row_number() over (partition by workload_key, never_received order by position desc)`.as('newestReceived'),
              'status',
              'neverReceived',
            ])
            .as('ranked'),
        )
        .select('ranked.id')
        .where((w) =>
          w.or([
            w('ranked.newest', '=', sql<string>`1`),
            w.and([w('ranked.status', '=', 'done'), w('ranked.newestDone', '=', sql<string>`1`)]),
            w.and([w('ranked.neverReceived', '=', false), w('ranked.newestReceived', '=', sql<string>`1`)]),
          ]),
        ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
