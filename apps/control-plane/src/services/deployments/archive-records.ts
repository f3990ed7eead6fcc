import type { ApplicationArchive, Db } from '@skiff/db';
import type { ArchiveSource } from '@skiff/proto';

/** The archive records of `drop` applications, as a deploy reads them (drop-archives.ts keeps them). */

/** One archive of an application, or null when it is not (or no longer) there. */
export async function archiveOf(db: Db, applicationId: string, archiveId: string): Promise<ApplicationArchive | null> {
  const row = await db
    .selectFrom('applicationArchives')
    .selectAll()
    .where('applicationId', '=', applicationId)
    .where('id', '=', archiveId)
    .executeTakeFirst();
  return row ?? null;
}

/** The newest archive uploaded for an application, or null when none was. */
export async function latestArchive(db: Db, applicationId: string): Promise<ApplicationArchive | null> {
  const row = await db
    .selectFrom('applicationArchives')
    .selectAll()
    .where('applicationId', '=', applicationId)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/** The DeployApplication source of an archive: what the agent fetches (FetchArchive) and checks. */
export function archiveSourceOf(row: ApplicationArchive): ArchiveSource {
  return { archiveId: row.id, format: row.format, size: String(row.size), sha256: row.sha256 };
}
