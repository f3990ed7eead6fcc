/**
 * Its own module (`@skiff/archives/unreadable`): a caller can recognise the error without
 * loading the readers (yauzl, tar-stream) before it reads an archive.
 */

/** A file that is not a readable archive of its format (corrupt, truncated, encrypted…). */
export class ArchiveUnreadable extends Error {
  override name = 'ArchiveUnreadable';
}
