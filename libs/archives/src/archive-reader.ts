/**
 * Reads a zip or tar.gz entry by entry, the same way on both sides: the control plane checks
 * an upload with it, the agent extracts with it. Entry names are decoded here (not by the
 * format libraries) so the archive rules of @skiff/domain, and their messages, are ours.
 */
import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import {
  type ArchiveEntry,
  ArchiveEntryError,
  type ArchiveFormat,
  type ArchiveLimits,
  isTarMetadata,
  tarEntryType,
  zipEntryMode,
  zipEntryType,
} from '@skiff/domain';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { ArchiveUnreadable } from './unreadable.js';

export { ArchiveUnreadable };

/** Called for each entry in order; `open` gives a file entry's content (read it to its end). */
export type ArchiveVisit = (entry: ArchiveEntry, open: () => Promise<AsyncIterable<Buffer>>) => Promise<void>;

/** What `visit` throws stops the walk and comes out unchanged; the reader's own failures come out as ArchiveUnreadable. */
export function walkArchive(path: string, format: ArchiveFormat, limits: ArchiveLimits, visit: ArchiveVisit): Promise<void> {
  return format === 'zip' ? walkZip(path, visit) : walkTarGz(path, limits, visit);
}

/** An error thrown by the caller's visit, carried through the reader untouched. */
class FromVisit {
  constructor(readonly error: unknown) {}
}

const unreadable = (format: string, err: unknown) =>
  err instanceof ArchiveUnreadable || err instanceof ArchiveEntryError ? err : new ArchiveUnreadable(`not a readable ${format}: ${(err as Error).message}`);

function walkZip(path: string, visit: ArchiveVisit): Promise<void> {
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
        reject(e instanceof FromVisit ? e.error : unreadable('zip', e));
      };
      zip.on('error', fail);
      zip.on('end', () => {
        if (!failed) resolve();
      });
      zip.on('entry', (e: yauzl.Entry) => {
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
        visit(entry, open).then(
          () => zip.readEntry(),
          (visitErr: unknown) => fail(new FromVisit(visitErr)),
        );
      });
      zip.readEntry();
    });
  });
}

async function walkTarGz(path: string, limits: ArchiveLimits, visit: ArchiveVisit): Promise<void> {
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
      }).catch((visitErr: unknown) => {
        throw new FromVisit(visitErr);
      });
      if (!opened) e.resume();
    }
    await feeding;
  } catch (err) {
    extract.destroy();
    if (err instanceof FromVisit) throw err.error;
    if (err instanceof ArchiveEntryError || err instanceof ArchiveUnreadable) throw err;
    const fed = await feeding.then(
      () => null,
      (e: unknown) => e,
    );
    if (fed instanceof ArchiveUnreadable) throw fed;
    throw new ArchiveUnreadable(`not a readable tar.gz: ${((fed ?? err) as Error).message}`);
  }
}
