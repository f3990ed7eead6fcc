import type { DatabaseEngine as EngineName } from '@skiff/db';
import { sql } from 'kysely';
import { wireServerId } from '@skiff/domain';
import { type Command, CommandKind, DatabaseEngine, type S3Object, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { endRunOfCommand } from '../../../services/backups/run-records.js';
import { type CommandResultContext, defineCommandKind, succeeded, workloadKey } from './kind.js';

/**
 * Dumps and restores of a database (backups' DumpDatabase, `backup.restore`'s
 * RestoreDatabase): the engine's tool runs on the agent of the database's server, in its
 * running container, streaming to or from the bucket object. Keyed like the workload's other
 * commands (`database:<id>`, `compose:<id>`), so they run in order with its deploys. A dump's
 * result ends its `backup_runs` row, whose event is then recorded whoever waits for it
 * (services/backups/runs.ts); a restore's result ends its `database_restores` record, with
 * the reason as its log.
 */

/** Longest dump or restore: a large database takes long, but not forever. */
export const DUMP_DEADLINE_MS = 6 * 60 * 60 * 1000;

export const WIRE_ENGINES: Record<EngineName, DatabaseEngine> = {
  postgres: DatabaseEngine.DATABASE_ENGINE_POSTGRES,
  mariadb: DatabaseEngine.DATABASE_ENGINE_MARIADB,
  mysql: DatabaseEngine.DATABASE_ENGINE_MYSQL,
  mongo: DatabaseEngine.DATABASE_ENGINE_MONGO,
  libsql: DatabaseEngine.DATABASE_ENGINE_LIBSQL,
};

export interface DumpTarget {
  type: 'database' | 'compose';
  id: string;
  appName: string;
  serverId: string | null;
  /** The compose stack's service; null for a database service. */
  serviceName: string | null;
  engine: DatabaseEngine;
  database: string;
}

export interface DumpCommandInput {
  commandId: string;
  target: DumpTarget;
  object: S3Object;
  createdAt: Date;
  deadline: Date;
}

/** The target and bucket object every database command carries. */
export function databaseCommandPayload(input: DumpCommandInput) {
  const { target } = input;
  return {
    target: {
      workload: { kind: target.type === 'compose' ? WorkloadKind.WORKLOAD_KIND_COMPOSE : WorkloadKind.WORKLOAD_KIND_CACHE, id: target.id, appName: target.appName },
      serviceName: target.serviceName ?? '',
      engine: target.engine,
      database: target.database,
    },
    object: input.object,
  };
}

function databaseCommand(input: DumpCommandInput, restore: boolean): Command {
  const { target } = input;
  const payload = databaseCommandPayload(input);
  return {
    commandId: input.commandId,
    serverId: wireServerId(target.serverId),
    kind: restore ? CommandKind.COMMAND_KIND_RESTORE_DATABASE : CommandKind.COMMAND_KIND_DUMP_DATABASE,
    workloadKey: workloadKey(target.type, target.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: restore ? { $case: 'restoreDatabase', value: payload } : { $case: 'dumpDatabase', value: payload },
  };
}

export const dumpDatabaseCommand = (input: DumpCommandInput) => databaseCommand(input, false);
export const restoreDatabaseCommand = (input: DumpCommandInput) => databaseCommand(input, true);

async function applyDumpResult({ tx, command, status, reason, at }: CommandResultContext): Promise<void> {
  if (command.kind !== 'COMMAND_KIND_RESTORE_DATABASE') return endRunOfCommand(tx, command.id, { succeeded: succeeded(status), reason, at });
  await tx
    .updateTable('databaseRestores')
    .set({ status: succeeded(status) ? 'done' : 'error', log: succeeded(status) ? sql<string>`'restored ' || object_key` : (reason ?? 'the restore did not end'), finishedAt: at })
    .where('commandId', '=', command.id)
    .execute();
}

export const databaseDump = defineCommandKind({
  name: 'database dump',
  kinds: [CommandKind.COMMAND_KIND_DUMP_DATABASE, CommandKind.COMMAND_KIND_RESTORE_DATABASE],
  workloads: ['database', 'compose'],
  applyResult: applyDumpResult,
});
