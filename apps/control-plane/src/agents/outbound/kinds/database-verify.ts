import { wireServerId } from '@skiff/domain';
import { type Command, CommandKind, timestampFromDate } from '@skiff/proto';
import { recordEvent } from '../../../services/events/events.js';
import { type DumpCommandInput, databaseCommandPayload } from './database-dump.js';
import { type CommandResultContext, defineCommandKind, succeeded, workloadKey } from './kind.js';

/**
 * Verifications of a backup file (`backup.verify`, VerifyDatabase): the agent of the
 * database's (or compose stack's) server restores the file into a throw-away container of the service's image and
 * answers its tables with their row counts (CommandResult.verification). Keyed like the
 * database's other commands. The result ends the `backup_verifications` record; a failed
 * verification is a `databaseBackup` failure event with `verify: true`.
 */

export interface VerifyCommandInput extends DumpCommandInput {
  /** The database service's image: the throw-away container runs the same engine and version. Empty for a compose stack's service: the agent reads the image it was deployed with. */
  image: string;
}

export function verifyDatabaseCommand(input: VerifyCommandInput): Command {
  const { target } = input;
  return {
    commandId: input.commandId,
    serverId: wireServerId(target.serverId),
    kind: CommandKind.COMMAND_KIND_VERIFY_DATABASE,
    workloadKey: workloadKey(target.type, target.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: { $case: 'verifyDatabase', value: { ...databaseCommandPayload(input), image: input.image } },
  };
}

async function applyVerifyResult({ tx, command, status, reason, at, verification }: CommandResultContext): Promise<void> {
  const ok = succeeded(status) && verification !== undefined;
  const tables = ok ? verification.tables.map((t) => ({ name: t.name, rows: t.rows })) : null;
  const error = ok ? null : (reason ?? 'the agent answered no tables');
  const row = await tx
    .updateTable('backupVerifications')
    .set({ status: ok ? 'done' : 'error', tables: tables ? JSON.stringify(tables) : null, error, finishedAt: at })
    .where('commandId', '=', command.id)
    .where('status', '=', 'running')
    .returning(['id', 'organizationId', 'backupId', 'objectKey', 'trigger'])
    .executeTakeFirst();
  if (!row || ok) return;
  await recordEvent(tx, {
    organizationId: row.organizationId,
    kind: 'databaseBackup',
    outcome: 'failure',
    summary: { backupId: row.backupId, verify: true, verificationId: row.id, key: row.objectKey, trigger: row.trigger, error },
  });
}

export const databaseVerify = defineCommandKind({
  name: 'database verify',
  kinds: [CommandKind.COMMAND_KIND_VERIFY_DATABASE],
  workloads: ['database', 'compose'],
  applyResult: applyVerifyResult,
});
