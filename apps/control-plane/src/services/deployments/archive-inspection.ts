import { ArchiveUnreadable } from '@skiff/archives/unreadable';
import {
  ArchiveChecker,
  ArchiveEntryError,
  type ArchiveFormat,
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
} from '@skiff/domain';

export { ArchiveUnreadable };

/**
 * Reads an uploaded archive entry by entry and applies the archive rules
 * (ArchiveChecker): names, links, devices, counts, declared and actual sizes, compression
 * ratio. Every file's content is decompressed (and discarded) so that sizes are checked
 * against what the archive really holds. Throws ArchiveEntryError naming the first
 * offending entry, or ArchiveUnreadable. The readers load with the first upload.
 */
export async function inspectArchive(path: string, format: ArchiveFormat, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS) {
  const { walkArchive } = await import('@skiff/archives');
  const checker = new ArchiveChecker(limits);
  let bytes = 0;
  await walkArchive(path, format, limits, async (entry, open) => {
    const accepted = checker.accept(entry);
    if (accepted.type !== 'file') return;
    const content = await open();
    try {
      for await (const chunk of content) {
        checker.countBytes(entry, accepted.path, chunk.length);
        bytes += chunk.length;
      }
    } catch (err) {
      if (err instanceof ArchiveEntryError) throw err;
      throw new ArchiveEntryError(entry.name, `cannot be read: ${(err as Error).message}`);
    }
    checker.finishEntry(entry, accepted.path);
  });
  if (checker.count === 0) throw new ArchiveUnreadable('the archive holds no entries');
  return { entries: checker.count, bytes };
}
