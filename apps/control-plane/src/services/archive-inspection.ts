import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import {
  type ArchiveEntry,
  ArchiveChecker,
  ArchiveEntryError,
  type ArchiveFormat,
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
  isTarMetadata,
  tarEntryType,
  zipEntryMode,
  zipEntryType,
} from '@skiff/domain';
import tar from 'tar-stream';
import yauzl from 'yauzl';

/** A file that is not a readable archive of its format (corrupt, truncated, encrypted…). */
export class ArchiveUnreadable extends Error {}

/** Called for each entry in order; `open` gives a file entry's content (read it to its end). */
type Visit = (entry: ArchiveEntry, open: () => Promise<AsyncIterable<Buffer>>) => Promise<void>;

/**
 * Reads an uploaded archive entry by entry and applies the archive rules
 * (ArchiveChecker): names, links, devices, counts, declared and actual sizes, compression
 * ratio. Every file's content is decompressed (and discarded) so that sizes are checked
 * against what the archive really holds. Throws ArchiveEntryError naming the first
 * offending entry, or ArchiveUnreadable.
 */
export async function inspectArchive(path: string, format: ArchiveFormat, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS) {
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

function walkArchive(path: string, format: ArchiveFormat, limits: ArchiveLimits, visit: Visit): Promise<void> {
  return format === 'zip' ? walkZip(path, visit) : walkTarGz(path, limits, visit);
}

function walkZip(path: string, visit: Visit): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(new ArchiveUnreadable(`not a readable zip: ${err?.message ?? 'unknown error'}`));
      let failed = false;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        try {
          zip.close();
        } catch {
          // already closed
        }
        reject(e instanceof ArchiveEntryError || e instanceof ArchiveUnreadable ? e : new ArchiveUnreadable(`not a readable zip: ${(e as Error).message}`));
      };
      zip.on('error', fail);
      zip.on('end', () => {
        if (!failed) resolve();
      });
      zip.on('entry', (e: yauzl.Entry) => {
        // Names are decoded here, not by yauzl, so that the rules (and their messages) are ours.
        const name = yauzl.getFileNameLowLevel(e.generalPurposeBitFlag, e.fileName as unknown as Buffer, e.extraFields, true);
        const entry: ArchiveEntry = {
          name,
          type: zipEntryType(name, e.externalFileAttributes, e.versionMadeBy),
          size: e.uncompressedSize,
          compressedSize: e.compressedSize,
          mode: zipEntryMode(e.externalFileAttributes, e.versionMadeBy),
        };
        const open = () =>
          new Promise<AsyncIterable<Buffer>>((res, rej) =>
            zip.openReadStream(e, (streamErr, stream) =>
              streamErr || !stream ? rej(new ArchiveEntryError(name, `cannot be read: ${streamErr?.message ?? 'no content'}`)) : res(stream),
            ),
          );
        visit(entry, open).then(() => zip.readEntry(), fail);
      });
      zip.readEntry();
    });
  });
}

async function walkTarGz(path: string, limits: ArchiveLimits, visit: Visit): Promise<void> {
  const extract = tar.extract();
  // The tar stream holds the files plus headers and padding; past this it cannot be within the limits.
  const ceiling = limits.maxTotalBytes + (limits.maxEntries + 16) * 1536;
  let seen = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > ceiling ? new ArchiveUnreadable(`the archive unpacks to more than ${limits.maxTotalBytes} bytes`) : null, chunk);
    },
  });
  const feeding = pipeline(createReadStream(path), createGunzip(), meter, extract);
  feeding.catch(() => {});
  try {
    for await (const e of extract) {
      const { header } = e;
      if (isTarMetadata(header.type)) {
        e.resume();
        continue;
      }
      const entry: ArchiveEntry = { name: header.name, type: tarEntryType(header.type), size: header.size ?? 0, mode: header.mode };
      let opened = false;
      await visit(entry, async () => {
        opened = true;
        return e as AsyncIterable<Buffer>;
      });
      if (!opened) e.resume();
    }
    await feeding;
  } catch (err) {
    extract.destroy();
    if (err instanceof ArchiveEntryError || err instanceof ArchiveUnreadable) throw err;
    const fed = await feeding.then(
      () => null,
      (e: unknown) => e,
    );
    if (fed instanceof ArchiveUnreadable) throw fed;
    throw new ArchiveUnreadable(`not a readable tar.gz: ${((fed ?? err) as Error).message}`);
  }
}
