import type { Backup, Db } from '@skiff/db';
import type { S3Object } from '@skiff/proto';
import { DUMP_DEADLINE_MS, type DumpTarget, WIRE_ENGINES, dumpDatabaseCommand } from '../../agents/outbound/kinds/database-dump.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { ENGINE_OF_ROUTER } from '../databases/engines.js';
import type { ServiceDeps } from '../shared/deps.js';

/** A dump that could not run or did not succeed: the runner records it as the run's failure. */
export class DumpFailed extends Error {}

/** A dump refused before anything was queued (its target is gone or not running): bad input to a manual run. */
export class DumpRefused extends DumpFailed {}

/** The file name ending of each engine's dump, gzipped. */
export const DUMP_EXTENSION: Record<string, string> = { postgres: 'dump.gz', mariadb: 'sql.gz', mysql: 'sql.gz', mongo: 'archive.gz', libsql: 'sql.gz' };

/**
 * Database backups run on the agent of the database's server (DumpDatabase): this finds what
 * a backup dumps and queues the command, linked to its run (`backup_runs`), whose outcome its
 * result decides (runs.ts).
 */
export class DatabaseDumps {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly outbox: CommandOutbox,
  ) {}

  /** What a backup dumps: its database service, or its compose stack's service. */
  async target(row: Backup): Promise<DumpTarget & { engineName: string }> {
    const engine = ENGINE_OF_ROUTER[row.databaseType as keyof typeof ENGINE_OF_ROUTER];
    if (!engine) throw new DumpRefused(`${row.databaseType} databases cannot be dumped by this version`);
    const wire = WIRE_ENGINES[engine.engine];
    if (row.backupType === 'compose') {
      const stack = await this.deps.db
        .selectFrom('composeStacks')
        .select(['id', 'appName', 'serverId', 'applicationStatus'])
        .where('id', '=', row.composeId ?? '')
        .executeTakeFirst();
      if (!stack || !row.serviceName) throw new DumpRefused('the backup’s compose stack is gone');
      if (stack.applicationStatus !== 'done') {
        throw new DumpRefused(`the compose stack ${stack.appName} is not running (${stack.applicationStatus}): deploy or start it first`);
      }
      return { type: 'compose', id: stack.id, appName: stack.appName, serverId: stack.serverId, serviceName: row.serviceName, engine: wire, database: row.database, engineName: engine.engine };
    }
    const id = row[`${engine.router}Id` as 'dbAId'];
    const service = await this.deps.db
      .selectFrom('databaseServices')
      .select(['id', 'appName', 'serverId', 'engine', 'applicationStatus'])
      .where('id', '=', id ?? '')
      .executeTakeFirst();
    if (!service || service.engine !== engine.engine) throw new DumpRefused('the backup’s database service is gone');
    // Its tool runs inside the running database: a stopped one would keep the run waiting for nothing.
    if (service.applicationStatus !== 'done') {
      throw new DumpRefused(`the database service ${service.appName} is not running (${service.applicationStatus}): deploy or start it first`);
    }
    return { type: 'database', id: service.id, appName: service.appName, serverId: service.serverId, serviceName: null, engine: wire, database: row.database, engineName: engine.engine };
  }

  /**
   * Queues the dump into `object`, `attach` writing the run's link to the command in the same
   * transaction; answers the command's deadline. Its result ends the run (runs.ts).
   */
  async queue(target: DumpTarget, object: S3Object, attach: (tx: Db, commandId: string) => Promise<void>): Promise<Date> {
    const now = this.deps.clock();
    const commandId = this.deps.ids('cmd');
    const deadline = new Date(now.getTime() + DUMP_DEADLINE_MS);
    await this.deps.db.transaction().execute(async (tx) => {
      await this.outbox.queue(tx, dumpDatabaseCommand({ commandId, target, object, createdAt: now, deadline }));
      await attach(tx, commandId);
    });
    this.outbox.notify();
    return deadline;
  }
}
