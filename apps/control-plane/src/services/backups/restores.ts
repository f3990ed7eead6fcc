import type { Backup, DatabaseRestore } from '@skiff/db';
import { DUMP_DEADLINE_MS, type DumpTarget, WIRE_ENGINES, restoreDatabaseCommand } from '../../agents/outbound/kinds/database-dump.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import { ENGINE_OF_ROUTER } from '../databases/engines.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { BackupService } from './backups.js';
import { isFileIn, ownPrefix } from './object-names.js';
import type { BackupRunner } from './runner.js';

/** Where a restore goes: the field naming it (for refusals), its name in messages, its status and the command's target. */
interface RestoreInto {
  field: string;
  name: string;
  status: string;
  target: Omit<DumpTarget, 'engine'>;
}

export interface RestoreInput {
  backupId: string;
  key: string;
  databaseId?: string | null;
  force?: boolean;
}

/**
 * `backup.restore`: a file of a database backup streamed into a database service of the same
 * kind (the backup's own by default), or a compose backup's file into the service of its
 * stack it was dumped from, by the agent of its server (RestoreDatabase). The
 * engine's restore tool runs inside the database's running container, so the database must
 * run, and the caller must say `force: true`: clients see the restore as it happens. Each
 * restore is kept in `database_restores` with its status and log (`backup.oneRestore`).
 */
export class DatabaseRestores {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly backups: BackupService,
    private readonly runner: BackupRunner,
    private readonly outbox: CommandOutbox,
  ) {}

  async restore(p: Principal, input: RestoreInput) {
    const backup = await this.backups.find(p, input.backupId);
    const engine = ENGINE_OF_ROUTER[backup.databaseType as keyof typeof ENGINE_OF_ROUTER];
    if (!engine) {
      throw Invalid('backupId', 'only backups of PostgreSQL, MariaDB, MySQL, MongoDB and libSQL databases can be restored');
    }
    const own = ownPrefix(backup.prefix, backup.id);
    if (!isFileIn(input.key, own)) {
      throw Invalid('key', `not a file of this backup (its files are ${own}<time>.<ext>, as backup.listBackupFiles lists them)`);
    }
    const into = backup.backupType === 'compose' ? await this.composeTarget(p, backup, input) : await this.databaseTarget(p, backup, input, engine);
    if (into.status !== 'done') {
      throw Invalid(into.field, `${into.name} is not running (${into.status}): deploy or start it first, the restore runs inside it`);
    }
    if (input.force !== true) {
      // A libSQL restore replaces the whole database (libsql-http.ts on the agent); the others, the dump's tables.
      const replaced = engine.engine === 'libsql' ? 'its whole content' : "the dump's tables";
      throw Invalid('force', `${into.name} runs: the restore replaces ${replaced} while clients may use them; pass force: true to restore into it`);
    }
    const destination = await this.deps.db.selectFrom('destinations').selectAll().where('id', '=', backup.destinationId).executeTakeFirstOrThrow();
    const settings = this.runner.settingsOf(destination);
    // The endpoint is checked against the outbound policy before the agent is sent to it.
    (await this.runner.open(settings)).close();
    const now = this.deps.clock();
    const restoreId = this.deps.ids('rst');
    const commandId = this.deps.ids('cmd');
    const command = restoreDatabaseCommand({
      commandId,
      target: { ...into.target, engine: WIRE_ENGINES[engine.engine] },
      object: this.runner.objectOf(destination, input.key),
      createdAt: now,
      deadline: new Date(now.getTime() + DUMP_DEADLINE_MS),
    });
    const compose = into.target.type === 'compose';
    await this.deps.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('databaseRestores')
        .values({
          id: restoreId,
          organizationId: backup.organizationId,
          backupId: backup.id,
          databaseServiceId: compose ? null : into.target.id,
          composeId: compose ? into.target.id : null,
          serviceName: into.target.serviceName,
          objectKey: input.key,
          commandId,
          status: 'running',
        })
        .execute();
      await this.outbox.queue(tx, command);
    });
    this.outbox.notify();
    return { restoreId, commandId, status: 'queued' as const };
  }

  /** A database backup's restore goes into its own service or, with `databaseId`, another of the same engine. */
  private async databaseTarget(p: Principal, backup: Backup, input: RestoreInput, engine: (typeof ENGINE_OF_ROUTER)[keyof typeof ENGINE_OF_ROUTER]): Promise<RestoreInto> {
    const databaseId = input.databaseId ?? backup[`${engine.router}Id` as 'dbAId'];
    if (!databaseId) throw Invalid('databaseId', 'required: the backup’s own database service is gone');
    const { row } = await this.access.reference(p, 'database', databaseId, 'databaseId');
    if (row.engine !== engine.engine) throw Invalid('databaseId', `not a ${engine.label} service: a backup restores into a service of its own kind`);
    return {
      field: 'databaseId',
      name: row.appName,
      status: row.applicationStatus,
      target: { type: 'database', id: row.id, appName: row.appName, serverId: row.serverId, serviceName: null, database: row.databaseName ?? backup.database },
    };
  }

  /** A compose backup's restore goes into the service it dumps (`serviceName` of its stack), the database the backup names. */
  private async composeTarget(p: Principal, backup: Backup, input: RestoreInput): Promise<RestoreInto> {
    if (input.databaseId !== undefined && input.databaseId !== null) {
      throw Invalid('databaseId', 'a compose backup restores into its own stack’s service (its serviceName); leave databaseId out');
    }
    if (!backup.composeId || !backup.serviceName) throw Invalid('backupId', 'the backup’s compose stack is gone');
    const { row } = await this.access.reference(p, 'compose', backup.composeId, 'backupId');
    return {
      field: 'backupId',
      name: `${row.appName} service ${backup.serviceName}`,
      status: row.applicationStatus,
      target: { type: 'compose', id: row.id, appName: row.appName, serverId: row.serverId, serviceName: backup.serviceName, database: backup.database },
    };
  }

  /** `backup.oneRestore`: a restore the caller may see (through its backup and its database service). */
  async one(p: Principal, restoreId: string) {
    // Another organization's restore is missing, not "No such backup": its existence stays unsaid.
    const row = await this.deps.db
      .selectFrom('databaseRestores')
      .selectAll()
      .where('id', '=', restoreId)
      .where('organizationId', '=', p.organizationId)
      .executeTakeFirst();
    if (!row) throw NotFound('No such restore');
    await this.backups.find(p, row.backupId);
    if (row.composeId) await this.access.through(p, 'compose', row.composeId, 'restore');
    else await this.access.through(p, 'database', row.databaseServiceId ?? '', 'restore');
    return record(row);
  }
}

const record = (row: DatabaseRestore) => ({
  restoreId: row.id,
  backupId: row.backupId,
  databaseId: row.databaseServiceId,
  composeId: row.composeId,
  serviceName: row.serviceName,
  key: row.objectKey,
  commandId: row.commandId,
  status: row.status,
  log: row.log,
  createdAt: iso(row.createdAt),
  finishedAt: row.finishedAt === null ? null : iso(row.finishedAt),
});
