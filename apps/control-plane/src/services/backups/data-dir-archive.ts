/**
 * The platform backup's tar of the data directory (SKIFF_DATA_DIR), streamed file by file.
 * Left out: the embedded database's folder (`db`, in the SQL dump), the encryption key
 * (`secret.key`: its own object, only with includeEncryptionKey), the owner's first API key
 * (`initial-api-key`) and transient files (TRANSIENT). Only directories and regular files are archived: a
 * symbolic link is skipped, never followed, and files are opened with O_NOFOLLOW, so nothing
 * outside the directory is read even if a link replaces a file while the walk runs.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { DumpProcess } from './dump-process.js';

/**
 * Top-level names left out of the archive: the embedded database, the encryption key, the
 * owner's first API key in clear (a live credential; the key itself is in the database,
 * hashed), and tools/up's lock.
 */
export const DATA_DIR_LEFT_OUT = ['db', 'secret.key', 'initial-api-key', 'up.lock'];

/**
 * Transient paths (relative, `/`-separated): uploads arriving (`archives/.incoming`), tools/up's
 * logs and pid files, NATS's JetStream store (commands are kept in the database's outbox and
 * sent again), half-written `*.tmp` files.
 */
const TRANSIENT_DIRS = new Set(['archives/.incoming', 'logs', 'nats/jetstream']);
const TRANSIENT = (path: string) => TRANSIENT_DIRS.has(path) || path.endsWith('.tmp') || path.endsWith('.pid');

export function dataDirArchive(dir: string): DumpProcess {
  const pack = tar.pack();
  const exited = (async () => {
    await addChildren(pack, dir, '');
    pack.finalize();
  })();
  exited.catch((err: Error) => pack.destroy(err));
  return { output: Readable.from(pack), exited };
}

async function addChildren(pack: tar.Pack, dir: string, rel: string): Promise<void> {
  const names = (await readdir(join(dir, rel))).sort();
  for (const name of names) {
    const path = rel ? `${rel}/${name}` : name;
    if ((!rel && DATA_DIR_LEFT_OUT.includes(name)) || TRANSIENT(path)) continue;
    const st = await lstat(join(dir, path));
    const header = { name: path, mode: st.mode & 0o7777, mtime: st.mtime };
    if (st.isDirectory()) {
      pack.entry({ ...header, type: 'directory' });
      await addChildren(pack, dir, path);
    } else if (st.isFile()) {
      await addFile(pack, join(dir, path), { ...header, size: st.size });
    }
  }
}

/** One file's entry, read with backpressure; a file whose size changed while it was read fails the archive (tar-stream's size check). */
async function addFile(pack: tar.Pack, file: string, header: { name: string; mode: number; mtime: Date; size: number }): Promise<void> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  const input = handle.createReadStream();
  await new Promise<void>((resolve, reject) => {
    const entry = pack.entry({ ...header, type: 'file' }, (err) => (err ? reject(err) : resolve()));
    input.on('error', (err) => {
      entry.destroy(err);
      reject(err);
    });
    input.on('data', (chunk) => {
      if (!entry.write(chunk)) input.pause();
    });
    entry.on('drain', () => input.resume());
    input.on('end', () => entry.end(undefined));
  });
}
