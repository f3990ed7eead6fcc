import { PassThrough, type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Backup, Destination } from '@skiff/db';
import { OutboundRefused, PUBLIC_ONLY } from '@skiff/outbound';
import type { S3Object } from '@skiff/proto';
import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid } from '../../errors.js';
import { recordEvent, type EventSignal } from '../events/events.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { BackupService } from './backups.js';
import type { DestinationService } from './destinations.js';
import { DUMP_EXTENSION, type DatabaseDumps, DumpFailed, DumpRefused } from './database-dumps.js';
import { dataDirArchive } from './data-dir-archive.js';
import { type DumpProcess, pgDump } from './dump-process.js';
import { readAhead } from './read-ahead.js';
import { type BackupRuns, RunRecorded, markSuccess } from './runs.js';
import { objectKey, ownPrefix, retentionVictims } from './object-names.js';
import { type Bucket, BucketError, type BucketSettings, openBucket } from './s3.js';

/** What the platform backup reads: the control plane's own database, data directory and key. */
export interface PlatformSource {
  /** The Postgres URL (DATABASE_URL); absent when the control plane runs on embedded PGlite. */
  databaseUrl?: string;
  /** On embedded PGlite: its plain SQL dump in pieces, read as the upload goes (DatabaseHandle.dumpSql). */
  dumpEmbedded?: () => AsyncIterable<Uint8Array>;
  /** SKIFF_DATA_DIR, archived beside the dump (data-dir-archive.ts); none in most tests. */
  dataDir?: string;
  secretKey: Buffer;
}

import type { RunResult } from './verifications.js';

export type { RunResult };

/** A run's failure, kept apart from the DomainErrors the caller's input causes. */
class RunFailed extends Error {}

const KIND_OF: Record<string, 'databaseBackup' | 'platformBackup'> = { 'web-server': 'platformBackup' };

/**
 * Runs backups: dumps streamed through gzip into the destination's bucket in multipart parts
 * (memory bounded whatever the size), retention under the backup's own folder, and one event
 * per run with its outcome, size and duration. The platform backup runs here; database
 * dumps run on the agent of the database's server (database-dumps.ts), which uploads them
 * itself: their outcome comes from the command's result, whoever waits (runs.ts), and the
 * size recorded is the stored object's. Every run has its row in `backup_runs`.
 */
export class BackupRunner {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly backups: BackupService,
    private readonly destinations: DestinationService,
    private readonly signal: EventSignal,
    private readonly platform: PlatformSource,
    private readonly log: Logger,
    private readonly dumps: DatabaseDumps,
    private readonly runs: BackupRuns,
  ) {}

  private get policy() {
    return this.deps.outbound ?? PUBLIC_ONLY;
  }

  /** `destination.testConnection`: lists, writes and removes a probe object; failures name the step and S3's code. */
  async testConnection(settings: BucketSettings): Promise<Record<string, never>> {
    const bucket = await this.open(settings);
    try {
      await bucket.probe('');
    } catch (err) {
      throw asInvalid(err);
    } finally {
      bucket.close();
    }
    return {};
  }

  /** `backup.manualBackupWebServer`. */
  async manualWebServer(p: Principal, backupId: string): Promise<RunResult> {
    const row = await this.backups.find(p, backupId);
    if (row.databaseType !== 'web-server') throw Invalid('backupId', 'not a backup of the platform (its databaseType is not web-server)');
    return this.runOrAnswer(row);
  }

  /** `backup.manualBackupDbA..DbE`: a backup of a database service of that kind. */
  async manualDatabase(p: Principal, backupId: string, router: 'dbA' | 'dbB' | 'dbC' | 'dbD' | 'dbE'): Promise<RunResult> {
    const row = await this.backups.find(p, backupId);
    if (row.databaseType !== router || row.backupType === 'compose') {
      throw Invalid('backupId', `not a backup of a ${router} database service (its databaseType is ${row.databaseType}, its backupType ${row.backupType})`);
    }
    return this.runOrAnswer(row);
  }

  /** `backup.manualBackupCompose`: a backup of a compose stack's service (`serviceName`). */
  async manualCompose(p: Principal, backupId: string): Promise<RunResult> {
    const row = await this.backups.find(p, backupId);
    if (row.backupType !== 'compose') throw Invalid('backupId', `not a backup of a compose stack (its backupType is ${row.backupType})`);
    return this.runOrAnswer(row);
  }

  /** `backup.listBackupFiles`: the objects of a destination whose key starts with `search`. */
  async listFiles(p: Principal, destinationId: string, search: string) {
    const destination = await this.destinations.find(p, destinationId);
    const bucket = await this.open(this.settingsOf(destination));
    try {
      const found = await bucket.list(search);
      return found.map((o) => ({ key: o.key, name: o.key.slice(o.key.lastIndexOf('/') + 1), size: o.size, lastModified: o.lastModified }));
    } catch (err) {
      throw asInvalid(err);
    } finally {
      bucket.close();
    }
  }

  private async runOrAnswer(row: Backup): Promise<RunResult> {
    try {
      return await this.run(row);
    } catch (err) {
      if (err instanceof BucketError || err instanceof OutboundRefused) throw asInvalid(err);
      if (err instanceof DumpRefused) throw Invalid('backupId', err.message);
      if (err instanceof RunFailed || err instanceof DumpFailed) throw new DomainError('INTERNAL_SERVER_ERROR', `The backup failed: ${err.message}`);
      throw err;
    }
  }

  /**
   * Runs one backup now (`claimed`: the scheduler's run row of this firing) and answers what it
   * stored. A platform backup runs here and is recorded here; a database backup is handed to its
   * agent and recorded from the command's result (runs.ts), this only waiting for it. A failure
   * before the agent has it is recorded here, then thrown.
   */
  async run(row: Backup, claimed?: string): Promise<RunResult> {
    const started = this.deps.clock();
    const kind = KIND_OF[row.databaseType] ?? 'databaseBackup';
    const runId = claimed ?? (await this.runs.begin(this.deps.db, { backupId: row.id }, row.organizationId, 'manual', started));
    if (claimed) await this.runs.started(runId, started);
    this.runs.hold(runId);
    const files: string[] = [];
    let size = 0;
    try {
      // What the backup dumps is known (or refused: its service is gone or stopped) before the destination is reached.
      const target = row.databaseType === 'web-server' ? null : await this.dumps.target(row);
      const destination = await this.deps.db.selectFrom('destinations').selectAll().where('id', '=', row.destinationId).executeTakeFirstOrThrow();
      if (target) {
        // The endpoint is checked against the outbound policy before the agent is sent to it.
        (await this.open(this.settingsOf(destination))).close();
        const key = objectKey(row.prefix, row.id, started, archiveExtension(destination, DUMP_EXTENSION[target.engineName]!));
        const deadline = await this.dumps.queue(target, this.objectOf(destination, key), (tx, commandId) => this.runs.attach(tx, runId, commandId, key));
        return { backupId: row.id, ...(await this.runs.wait(runId, deadline)) };
      }
      const bucket = await this.open(this.settingsOf(destination));
      try {
        const name = row.id;
        const sql = objectKey(row.prefix, name, started, archiveExtension(destination, 'sql.gz'));
        size += await this.store(bucket, sql, await this.dumpPlatform(), this.passphraseOf(destination));
        files.push(sql);
        if (this.platform.dataDir) {
          const data = objectKey(row.prefix, name, started, archiveExtension(destination, 'data.tar.gz'));
          size += await this.store(bucket, data, dataDirArchive(this.platform.dataDir), this.passphraseOf(destination));
          files.push(data);
        }
        if (row.includeEncryptionKey) {
          const key = objectKey(row.prefix, name, started, archiveExtension(destination, 'secret.key.gz'));
          size += await this.store(bucket, key, { output: readableOf(this.platform.secretKey), exited: Promise.resolve() }, this.passphraseOf(destination));
          files.push(key);
        }
        if (row.keepLatestCount) {
          const own = ownPrefix(row.prefix, name);
          await bucket.remove(retentionVictims((await bucket.list(own)).map((o) => o.key), own, row.keepLatestCount));
        }
      } finally {
        bucket.close();
      }
    } catch (err) {
      // Recorded from its command's result (or its record already says how it ended).
      if (err instanceof RunRecorded) throw err;
      const durationMs = this.deps.clock().getTime() - started.getTime();
      const error = err instanceof Error ? err.message : String(err);
      this.log.warn({ backupId: row.id, error }, 'backup failed');
      await this.record(runId, row, kind, 'failure', { backupId: row.id, files, size, durationMs, error });
      throw err;
    } finally {
      this.runs.release(runId);
    }
    const durationMs = this.deps.clock().getTime() - started.getTime();
    await this.record(runId, row, kind, 'success', { backupId: row.id, files, size, durationMs }, started);
    return { backupId: row.id, files, size, durationMs };
  }

  /**
   * pg_dump of DATABASE_URL, streamed; on PGlite its dump in pieces, read ahead of the upload and
   * gzipped into a bounded buffer (read-ahead.ts), so that the session it holds is not held for the upload.
   */
  private async dumpPlatform(): Promise<DumpProcess> {
    if (this.platform.databaseUrl) return pgDump(this.platform.databaseUrl);
    if (!this.platform.dumpEmbedded) throw new RunFailed('the control plane has no database it can dump');
    const { output, done } = readAhead(embeddedPieces(this.platform.dumpEmbedded()));
    return { output, exited: done, gzipped: true };
  }

  /**
   * Streams a dump through gzip (and age, with the destination's passphrase) into `key`; a
   * dump that fails removes what was stored. Answers the bytes stored.
   */
  private async store(bucket: Bucket, key: string, dump: DumpProcess, passphrase: string | null): Promise<number> {
    let stored = 0;
    const compressed = new PassThrough();
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        stored += chunk.length;
        done(null, chunk);
      },
    });
    const gzip = dump.gzipped ? new PassThrough() : createGzip();
    const piping = passphrase
      ? Promise.all([pipeline(dump.output, gzip), encryptedLazily(gzip, passphrase).then((sealed) => pipeline(sealed, counter, compressed))])
      : pipeline(dump.output, gzip, counter, compressed);
    try {
      await Promise.all([bucket.upload(key, compressed, passphrase ? 'application/octet-stream' : undefined), piping, dump.exited]);
      return stored;
    } catch (err) {
      compressed.destroy();
      gzip.destroy();
      dump.output.destroy();
      await bucket.remove([key]).catch(() => undefined);
      if (err instanceof BucketError) throw err;
      throw new RunFailed(err instanceof Error ? err.message : String(err));
    }
  }

  /** A run carried out here: settled and recorded in one transaction, unless its record was already settled (taken for orphaned). */
  private async record(runId: string, row: Backup, kind: 'databaseBackup' | 'platformBackup', outcome: 'success' | 'failure', summary: Record<string, unknown>, started?: Date) {
    const ok = outcome === 'success';
    const recorded = await this.deps.db.transaction().execute(async (tx) => {
      if (!(await this.runs.settle(tx, runId, ok, ok ? null : String(summary.error), Number(summary.size)))) return false;
      if (started) await markSuccess(tx, { table: 'backups', id: row.id }, started);
      await recordEvent(tx, { organizationId: row.organizationId, kind, outcome, summary });
      return true;
    });
    if (recorded) this.signal.notify();
  }

  private passphraseOf(d: Destination): string | null {
    return d.encryptionPassphrase ? this.deps.secrets.open(d.encryptionPassphrase) : null;
  }

  /** A bucket object of the destination as an agent command carries it: its credentials, and its passphrase when archives are encrypted. */
  objectOf(d: Destination, key: string): S3Object {
    return { ...this.settingsOf(d), key, passphrase: d.encryptionPassphrase ? this.deps.secrets.open(d.encryptionPassphrase) : '' };
  }

  settingsOf(d: Destination): BucketSettings {
    return { endpoint: d.endpoint, region: d.region, bucket: d.bucket, accessKey: this.deps.secrets.open(d.accessKey), secretKey: this.deps.secrets.open(d.secretKey) };
  }

  async open(settings: BucketSettings): Promise<Bucket> {
    try {
      return await openBucket(settings, this.policy);
    } catch (err) {
      if (err instanceof OutboundRefused) throw Invalid('endpoint', err.message);
      throw err;
    }
  }
}

/** The file name ending of an archive written to `d`: `.age` added when the destination encrypts. */
export const archiveExtension = (d: Destination, ext: string) => (d.encryptionPassphrase ? `${ext}.age` : ext);

/** A bucket's failure as bad input naming the field it most likely concerns. */
function asInvalid(err: unknown): unknown {
  if (err instanceof OutboundRefused) return Invalid('endpoint', err.message);
  if (!(err instanceof BucketError)) return err;
  const field = err.code === 'NoSuchBucket' ? 'bucket' : /AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch/.test(err.code) ? 'accessKey' : 'endpoint';
  return Invalid(field, err.message);
}

/** The embedded database's dump, its failure named as such. */
async function* embeddedPieces(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* pieces;
  } catch (err) {
    throw new Error(`the embedded database could not be dumped: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function readableOf(data: Buffer): Readable {
  const stream = new PassThrough();
  stream.end(data);
  return stream;
}

/** age (and its post-quantum and curve code) loads with the first encrypted backup. */
async function encryptedLazily(plain: Readable, passphrase: string): Promise<Readable> {
  const { encrypted } = await import('@skiff/archives/age');
  return encrypted(plain, passphrase);
}
