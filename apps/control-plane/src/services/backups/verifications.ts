import type { Backup, BackupVerification, Db, Destination } from '@skiff/db';
import { type Command, type S3Object } from '@skiff/proto';
import type { Logger } from 'pino';
import { DUMP_DEADLINE_MS, type DumpTarget, WIRE_ENGINES } from '../../agents/outbound/kinds/database-dump.js';
import { verifyDatabaseCommand } from '../../agents/outbound/kinds/database-verify.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import { ENGINE_OF_ROUTER } from '../databases/engines.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import type { BackupService } from './backups.js';
import { isFileIn, ownPrefix, runStampOf } from './object-names.js';
import type { Bucket, BucketSettings } from './s3.js';

/** What a verification needs of the runner's buckets (runner.ts: BackupRunner). */
export interface VerificationBuckets {
  open(settings: BucketSettings): Promise<Bucket>;
  settingsOf(d: Destination): BucketSettings;
  objectOf(d: Destination, key: string): S3Object;
}

/** A scheduled run that succeeded (runner.ts). */
export type RunResult = {
  backupId: string;
  files: string[];
  size: number;
  durationMs: number;
};

export interface VerifyInput {
  backupId: string;
  key?: string | null;
}

/** The key file a run writes beside its dump with `includeEncryptionKey` (`.age` when encrypted): never a dump. */
const isKeyFile = (key: string) => /\.secret\.key\.gz(\.age)?$/.test(key);

/**
 * `backup.verify` (beyond the spec): proves that a database backup's file restores. The
 * agent of the database's server restores it into a throw-away container of the service's
 * image (of a compose stack's service: the image it runs as deployed; no network, its own
 * credentials, removed at the end) and answers its tables with their row counts
 * (VerifyDatabase, agents/outbound/kinds/database-verify.ts, which ends the record and sends
 * the failure event). The running database (or stack) is not touched, so it need not run. The
 * scheduler verifies the file of each successful scheduled run (`afterScheduledRun`).
 */
export class BackupVerifications {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly backups: BackupService,
    private readonly runner: VerificationBuckets,
    private readonly outbox: CommandOutbox,
    private readonly log: Logger,
  ) {}

  async verify(p: Principal, input: VerifyInput) {
    const backup = await this.backups.find(p, input.backupId);
    return this.queue(backup, input.key ?? null, 'manual');
  }

  /** After a successful scheduled run of a verifiable backup: its new file is verified; a refusal is only logged. */
  async afterScheduledRun(row: Backup, result: RunResult): Promise<void> {
    const key = result.files.find((f) => !isKeyFile(f));
    const prepared = key ? await this.prepareScheduled(row, key) : null;
    if (!prepared) return;
    await this.deps.db.transaction().execute((tx) => this.insert(tx, prepared));
    this.outbox.notify();
  }

  /**
   * The verification of a scheduled run's new file (known stored: no listing), to be inserted in
   * the transaction that records the run (runs.ts); null when the backup is not verifiable or
   * its target is gone (logged).
   */
  async prepareScheduled(row: Backup, key: string): Promise<PreparedVerification | null> {
    if (!this.verifiable(row) || isKeyFile(key)) return null;
    try {
      return await this.prepare(row, key, 'scheduled');
    } catch (err) {
      this.log.warn({ backupId: row.id, err: (err as Error).message }, 'scheduled verification not queued');
      return null;
    }
  }

  /** Writes a prepared verification and its command; the caller wakes the outbox (`notify`) once committed. */
  async insert(tx: Db, p: PreparedVerification): Promise<void> {
    await tx.insertInto('backupVerifications').values(p.values).execute();
    await this.outbox.queue(tx, p.command);
  }

  notify(): void {
    this.outbox.notify();
  }

  /** `backup.oneVerification`. */
  async one(p: Principal, verificationId: string) {
    const row = await this.deps.db.selectFrom('backupVerifications').selectAll().where('id', '=', verificationId).executeTakeFirst();
    if (!row || row.organizationId !== p.organizationId) throw NotFound('No such verification');
    await this.backups.find(p, row.backupId);
    return record(row);
  }

  /** `backup.verifications`: a backup's verifications, newest first. */
  async list(p: Principal, backupId: string, limit = 20) {
    await this.backups.find(p, backupId);
    const rows = await this.deps.db.selectFrom('backupVerifications').selectAll().where('backupId', '=', backupId).orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return { verifications: rows.map(record) };
  }

  /** A database's backup (every engine's dumps restore into a throw-away container), not the platform's. */
  private verifiable(row: Backup): boolean {
    return ENGINE_OF_ROUTER[row.databaseType as keyof typeof ENGINE_OF_ROUTER] !== undefined;
  }

  /**
   * What verifies the file: the database service's image, or, for a compose stack's service,
   * the image the agent finds that service deployed with (the command names none: the stack's
   * file may have changed since it was deployed).
   */
  private async targetOf(backup: Backup): Promise<{ target: DumpTarget; image: string }> {
    const engine = ENGINE_OF_ROUTER[backup.databaseType as keyof typeof ENGINE_OF_ROUTER];
    const wire = WIRE_ENGINES[engine.engine];
    if (backup.backupType === 'compose') {
      const stack = await this.deps.db.selectFrom('composeStacks').select(['id', 'appName', 'serverId']).where('id', '=', backup.composeId ?? '').executeTakeFirst();
      if (!stack || !backup.serviceName) throw Invalid('backupId', 'the backup’s compose stack is gone: the image of its service is what verifies the file');
      const target = { type: 'compose', id: stack.id, appName: stack.appName, serverId: stack.serverId, serviceName: backup.serviceName, engine: wire, database: backup.database } as const;
      return { target, image: '' };
    }
    const service = await this.deps.db
      .selectFrom('databaseServices')
      .select(['id', 'appName', 'serverId', 'engine', 'containerImage'])
      .where('id', '=', backup[`${engine.router}Id` as 'dbAId'] ?? '')
      .executeTakeFirst();
    if (!service || service.engine !== engine.engine) throw Invalid('backupId', 'the backup’s database service is gone: its image is what verifies the file');
    const target = { type: 'database', id: service.id, appName: service.appName, serverId: service.serverId, serviceName: null, engine: wire, database: backup.database } as const;
    return { target, image: service.containerImage };
  }

  private async queue(backup: Backup, key: string | null, trigger: 'manual' | 'scheduled') {
    if (!this.verifiable(backup)) {
      throw Invalid('backupId', 'only backups of PostgreSQL, MariaDB, MySQL, MongoDB and libSQL databases (services, or services of a compose stack) can be verified');
    }
    // Its target is checked before the destination is reached.
    await this.targetOf(backup);
    const destination = await this.deps.db.selectFrom('destinations').selectAll().where('id', '=', backup.destinationId).executeTakeFirstOrThrow();
    const own = ownPrefix(backup.prefix, backup.id);
    if (key !== null && !isFileIn(key, own)) {
      throw Invalid('key', `not a file of this backup (its files are ${own}<time>.<ext>, as backup.listBackupFiles lists them)`);
    }
    const bucket = await this.runner.open(this.runner.settingsOf(destination));
    let files: string[];
    try {
      files = (await bucket.list(own)).map((o) => o.key).filter((k) => runStampOf(k, own) !== null && !isKeyFile(k));
    } catch (err) {
      throw Invalid('backupId', `the destination’s files could not be listed: ${(err as Error).message}`);
    } finally {
      bucket.close();
    }
    if (key !== null && !files.includes(key)) throw Invalid('key', 'no such file in the backup’s destination');
    const chosen = key ?? files.sort().at(-1);
    if (!chosen) throw Invalid('backupId', 'the backup has no file yet: run it first');
    const prepared = await this.prepare(backup, chosen, trigger);
    await this.deps.db.transaction().execute((tx) => this.insert(tx, prepared));
    this.outbox.notify();
    return { verificationId: prepared.values.id, commandId: prepared.values.commandId, key: chosen, status: 'queued' as const };
  }

  /** The record and the VerifyDatabase command of a verification of `key`. */
  private async prepare(backup: Backup, key: string, trigger: 'manual' | 'scheduled'): Promise<PreparedVerification> {
    const { target, image } = await this.targetOf(backup);
    const destination = await this.deps.db.selectFrom('destinations').selectAll().where('id', '=', backup.destinationId).executeTakeFirstOrThrow();
    const now = this.deps.clock();
    const id = this.deps.ids('vrf');
    const commandId = this.deps.ids('cmd');
    const command = verifyDatabaseCommand({
      commandId,
      target,
      object: this.runner.objectOf(destination, key),
      image,
      createdAt: now,
      deadline: new Date(now.getTime() + DUMP_DEADLINE_MS),
    });
    return { values: { id, organizationId: backup.organizationId, backupId: backup.id, objectKey: key, commandId, trigger, status: 'running' }, command };
  }
}

/** A verification ready to be written with its command (`BackupVerifications.insert`). */
export interface PreparedVerification {
  values: { id: string; organizationId: string; backupId: string; objectKey: string; commandId: string; trigger: 'manual' | 'scheduled'; status: 'running' };
  command: Command;
}

const record = (row: BackupVerification) => ({
  verificationId: row.id,
  backupId: row.backupId,
  key: row.objectKey,
  commandId: row.commandId,
  trigger: row.trigger,
  status: row.status,
  tables: row.tables === null ? null : row.tables.map((t) => ({ name: t.name, rows: Number(t.rows) })),
  error: row.error,
  createdAt: iso(row.createdAt),
  finishedAt: row.finishedAt === null ? null : iso(row.finishedAt),
});
