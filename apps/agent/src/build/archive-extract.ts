/**
 * Extracting an uploaded archive (zip or tar.gz) into a build's source directory under the
 * archive rules of @skiff/domain (archive-entries.ts), applied again here whatever the
 * control plane checked: no `..`, absolute paths, drive letters or backslashes; no links,
 * devices or other special entries; limits on entries and unpacked bytes (counted as
 * actually read, so a lying header is caught); zip compression ratio. Files are created new
 * (O_EXCL: an existing path, or a link, is never written through) with mode 0644 or 0755,
 * never setuid, setgid or sticky. A single top-level folder is flattened afterwards.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ArchiveUnreadable, walkArchive } from '@skiff/archives';
import {
  type AcceptedEntry,
  ArchiveChecker,
  ArchiveEntryError,
  type ArchiveFormat,
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
  flattenPrefix,
  safeFileMode,
} from '@skiff/domain';
import { inside } from './paths.js';

export { ArchiveUnreadable };

/** The extraction was stopped: by the signal (`aborted`) or by the deadline. */
export class ExtractionStopped extends Error {
  override name = 'ExtractionStopped';
  constructor(readonly aborted: boolean) {
    super(aborted ? 'the extraction was stopped' : 'the extraction did not finish before the deadline');
  }
}

export interface ExtractOptions {
  signal: AbortSignal;
  /** Epoch ms. */
  deadline: number;
  limits?: ArchiveLimits;
}

export interface Extracted {
  files: number;
  directories: number;
  bytes: number;
  /** The top-level folder that was flattened; '' when none was. */
  flattened: string;
}

/** Extracts `archive` into the empty directory `dir`. Throws ArchiveEntryError, ArchiveUnreadable or ExtractionStopped. */
export async function extractArchive(archive: string, format: ArchiveFormat, dir: string, options: ExtractOptions): Promise<Extracted> {
  const limits = options.limits ?? DEFAULT_ARCHIVE_LIMITS;
  const checker = new ArchiveChecker(limits);
  const accepted: AcceptedEntry[] = [];
  const result: Extracted = { files: 0, directories: 0, bytes: 0, flattened: '' };
  const checkTime = () => {
    if (options.signal.aborted) throw new ExtractionStopped(true);
    if (Date.now() >= options.deadline) throw new ExtractionStopped(false);
  };

  await walkArchive(archive, format, limits, async (entry, open) => {
    checkTime();
    const a = checker.accept(entry);
    accepted.push(a);
    if (a.path === '') return;
    const target = join(dir, ...a.path.split('/'));
    if (!inside(dir, target) || target === dir) throw new ArchiveEntryError(entry.name, 'leads outside the source');
    if (a.type === 'directory') {
      await mkdir(target, { recursive: true, mode: 0o755 });
      result.directories += 1;
      return;
    }
    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    const content = await open();
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        try {
          checker.countBytes(entry, a.path, chunk.length);
          checkTime();
        } catch (err) {
          return done(err as Error);
        }
        result.bytes += chunk.length;
        done(null, chunk);
      },
    });
    try {
      // `wx`: created new; never opens an existing path (or a link planted there).
      await pipeline(content, meter, createWriteStream(target, { flags: 'wx', mode: safeFileMode(entry.mode) }));
    } catch (err) {
      if (err instanceof ArchiveEntryError || err instanceof ExtractionStopped) throw err;
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new ArchiveEntryError(entry.name, 'the path appears twice');
      throw new ArchiveEntryError(entry.name, `cannot be read: ${(err as Error).message}`);
    }
    checker.finishEntry(entry, a.path);
    result.files += 1;
  });
  if (checker.count === 0) throw new ArchiveUnreadable('the archive holds no entries');

  result.flattened = flattenPrefix(accepted);
  if (result.flattened) await flatten(dir, result.flattened);
  return result;
}

/** Moves everything inside `dir/<folder>` up into `dir` (the folder is the only thing in `dir`). */
async function flatten(dir: string, folder: string): Promise<void> {
  // Renamed first, so that a child with the folder's own name (`site/site`) can move up.
  const parked = join(dir, `.skiff-flatten-${randomBytes(6).toString('hex')}`);
  await rename(join(dir, folder), parked);
  for (const name of await readdir(parked)) await rename(join(parked, name), join(dir, name));
  await rmdir(parked);
}
