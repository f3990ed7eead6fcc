import { chmod, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ArchiveEntryError, type ArchiveLimits, DEFAULT_ARCHIVE_LIMITS, archiveFormatOf, wireServerId } from '@skiff/domain';
import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { ArchiveUnreadable, inspectArchive } from './archive-inspection.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { DeployInput, DeploymentService } from './deployments.js';
import type { ServiceAccess } from '../shared/service-access.js';

/** A file received with a request (http/uploads.ts writes it): on disk (mode 0600) until the request ends, unless a service moved it. */
export interface UploadedFile {
  path: string;
  size: number;
  /** SHA-256 of the content, lowercase hex. */
  sha256: string;
  /** The first bytes (up to 512), to recognise the format. */
  head: Buffer;
}

/**
 * How many archives of one application are kept (the newest); older ones are removed unless
 * an unfinished deployment may still need them (`DropArchiveService.prune`).
 */
export const KEEP_ARCHIVES = 3;

/**
 * Archives created this long before the one an unfinished deployment builds are kept too:
 * simultaneous uploads each write their archive row before their deployment row, in any order.
 */
const ARCHIVE_MARGIN_MS = 60_000;

export interface DropArchiveOptions {
  /** Where archive files are kept: `<dataDir>/archives`. Uploads arrive in its `.incoming` folder. */
  dir: string;
  limits?: ArchiveLimits;
  /** Archives kept per application. Default KEEP_ARCHIVES. */
  keep?: number;
  log: Logger;
}

/** Ids are the file names of archives: anything else in the folder is not ours to serve. */
const ARCHIVE_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * Archives of `drop` applications: `application.dropDeployment` checks an uploaded file,
 * keeps it (`<dir>/<archiveId>`, mode 0600, with an `application_archives` row) and queues a
 * deployment through the deployments service, which puts the newest archive on the command
 * (latestArchive / archiveSourceOf). Only the newest few archives of an application are
 * kept, and those an unfinished deployment may still fetch; a file without a row (an older
 * archive, a deleted application's) is removed.
 */
export class DropArchiveService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly deployments: Pick<DeploymentService, 'deploy'>,
    private readonly o: DropArchiveOptions,
  ) {}

  /** Where uploads are written while their request runs (same filesystem: kept ones are renamed). */
  get incomingDir(): string {
    return join(this.o.dir, '.incoming');
  }

  pathOf(archiveId: string): string {
    if (!ARCHIVE_ID.test(archiveId)) throw new Error('not an archive id');
    return join(this.o.dir, archiveId);
  }

  /** `application.dropDeployment`: answers the queued deployment, like `application.deploy`. */
  async upload(p: Principal, input: DeployInput, file: UploadedFile) {
    const { row: app } = await this.access.find(p, 'application', input.applicationId);
    if (app.sourceType !== 'drop') throw Invalid('sourceType', `the application's source is ${app.sourceType}, not drop: archives deploy only drop applications`);
    const format = archiveFormatOf(file.head);
    if (!format) throw Invalid('archive', 'not a zip or tar.gz archive');
    try {
      await inspectArchive(file.path, format, this.o.limits ?? DEFAULT_ARCHIVE_LIMITS);
    } catch (err) {
      if (err instanceof ArchiveEntryError) throw Invalid('archive', `refused entry ${JSON.stringify(err.entry)}: ${err.reason}`);
      if (err instanceof ArchiveUnreadable) throw Invalid('archive', err.message);
      throw err;
    }

    const archiveId = this.deps.ids('arc');
    // The row first, then the file: a sweep running in between finds no file without a row.
    await this.deps.db
      .insertInto('applicationArchives')
      .values({ id: archiveId, applicationId: app.id, format, size: file.size, sha256: file.sha256 })
      .execute();
    const path = this.pathOf(archiveId);
    let deployment;
    try {
      await mkdir(this.o.dir, { recursive: true, mode: 0o700 });
      await rename(file.path, path);
      await chmod(path, 0o600);
      // This upload, not the newest: two uploads at once must each deploy their own.
      deployment = await this.deployments.deploy(p, input, 'deploy', { archiveId });
    } catch (err) {
      await this.deps.db.deleteFrom('applicationArchives').where('id', '=', archiveId).execute();
      await rm(path, { force: true });
      throw err;
    }
    this.o.log.info({ applicationId: app.id, archiveId, format, size: file.size, deploymentId: deployment.deploymentId }, 'archive accepted');
    await this.prune(app.id).catch((err: unknown) => this.o.log.error({ err, applicationId: app.id }, 'could not prune old archives'));
    return deployment;
  }

  /** The file of an archive, when the agent of `serverId` may fetch it (its application runs there). */
  async locate(serverId: string, archiveId: string): Promise<{ path: string; size: number } | null> {
    if (!ARCHIVE_ID.test(archiveId)) return null;
    const row = await this.deps.db
      .selectFrom('applicationArchives')
      .innerJoin('applications', 'applications.id', 'applicationArchives.applicationId')
      .select(['applicationArchives.id', 'applicationArchives.size', 'applications.serverId'])
      .where('applicationArchives.id', '=', archiveId)
      .executeTakeFirst();
    if (!row || wireServerId(row.serverId) !== serverId) return null;
    return { path: this.pathOf(row.id), size: Number(row.size) };
  }

  /**
   * Removes the rows and files of an application's older archives, keeping the newest few
   * and every archive an unfinished (queued or running) deployment may still fetch: the
   * deployment carries its archive's id, not the file, and the agent fetches it only when it
   * builds, maybe after several more uploads. Runs after each upload, so archives kept for a
   * deployment go with a later upload once it has ended.
   */
  async prune(applicationId: string): Promise<void> {
    const newest = await this.deps.db
      .selectFrom('applicationArchives')
      .select(['id', 'createdAt'])
      .where('applicationId', '=', applicationId)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .offset(this.o.keep ?? KEEP_ARCHIVES)
      .limit(1000)
      .execute();
    const neededFrom = await this.oldestNeeded(applicationId);
    const ids = newest.filter((r) => neededFrom === null || r.createdAt < neededFrom).map((r) => r.id);
    if (ids.length === 0) return;
    await this.deps.db.deleteFrom('applicationArchives').where('id', 'in', ids).execute();
    for (const id of ids) await rm(this.pathOf(id), { force: true });
  }

  /**
   * The creation time from which the application's unfinished deployments may need archives,
   * or null when none is unfinished. The oldest such deployment builds either its own upload
   * (created just before it) or, redeployed, the newest archive created before it: everything
   * from the earlier of the two, less a margin for the time between the rows, is kept.
   */
  private async oldestNeeded(applicationId: string): Promise<Date | null> {
    const oldest = await this.deps.db
      .selectFrom('deployments')
      .select('createdAt')
      .where('applicationId', '=', applicationId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('createdAt', 'asc')
      .limit(1)
      .executeTakeFirst();
    if (!oldest) return null;
    const before = await this.deps.db
      .selectFrom('applicationArchives')
      .select('createdAt')
      .where('applicationId', '=', applicationId)
      .where('createdAt', '<=', oldest.createdAt)
      .orderBy('createdAt', 'desc')
      .limit(1)
      .executeTakeFirst();
    const from = before && before.createdAt < oldest.createdAt ? before.createdAt : oldest.createdAt;
    return new Date(from.getTime() - ARCHIVE_MARGIN_MS);
  }

  /**
   * Removes archive files without a row (older archives, deleted applications' archives, an
   * interrupted upload's leftovers). Answers how many were removed.
   */
  async sweep(): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(this.o.dir)).filter((n) => ARCHIVE_ID.test(n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (let i = 0; i < names.length; i += 500) {
      const batch = names.slice(i, i + 500);
      const kept = new Set(
        (await this.deps.db.selectFrom('applicationArchives').select('id').where('id', 'in', batch).execute()).map((r) => r.id),
      );
      for (const name of batch) {
        if (kept.has(name)) continue;
        await rm(join(this.o.dir, name), { force: true });
        removed += 1;
      }
    }
    // Uploads still arriving live in `.incoming`; at start nothing is arriving.
    return removed;
  }

  /** At start: no upload is running, so whatever `.incoming` holds is left over. */
  async clearIncoming(): Promise<void> {
    await rm(this.incomingDir, { recursive: true, force: true });
  }
}
