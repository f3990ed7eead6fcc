import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import yazl from 'yazl';

/** One entry of a test archive; archives may be as evil as a test needs. */
export interface TestEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'hardlink' | 'device';
  content?: string | Buffer;
  /** Permission bits (e.g. 0o4755 for a setuid file). */
  mode?: number;
  /** Target of a symlink or hard link. */
  linkname?: string;
  /** zip only: the uncompressed size written in the headers, instead of the true one. */
  declaredSize?: number;
}

const bytesOf = (c: string | Buffer | undefined) => (typeof c === 'string' ? Buffer.from(c) : (c ?? Buffer.alloc(0)));

const TAR_TYPES = { file: 'file', directory: 'directory', symlink: 'symlink', hardlink: 'link', device: 'character-device' } as const;

/** A gzip-compressed tar holding `entries` as given (names are written as they are). */
export async function tarGz(entries: TestEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  for (const e of entries) {
    const type = TAR_TYPES[e.type ?? 'file'];
    const content = type === 'file' ? bytesOf(e.content) : Buffer.alloc(0);
    await new Promise<void>((resolve, reject) =>
      pack.entry(
        { name: e.name, type, mode: e.mode ?? (type === 'directory' ? 0o755 : 0o644), size: content.length, linkname: e.linkname, devmajor: 1, devminor: 3 },
        content,
        (err) => (err ? reject(err) : resolve()),
      ),
    );
  }
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/** Names yazl refuses to write; they are written under a placeholder of the same length, then patched in. */
const needsPatch = (name: string) => /^[a-zA-Z]:/.test(name) || name.startsWith('/') || name.includes('\\') || name.split('/').includes('..');

/**
 * A zip holding `entries`. Links are Unix-mode entries (as `zip -y` writes them); devices
 * are Unix character devices; names yazl would refuse (`..`, absolute, backslashes) are
 * patched into the finished file; `declaredSize` overrides the sizes in the headers.
 */
export async function zipArchive(entries: TestEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const patches: Array<[placeholder: Buffer, name: Buffer]> = [];
  const sizes: Array<[name: Buffer, size: number]> = [];
  for (const e of entries) {
    let name = e.name;
    if (needsPatch(name)) {
      const real = Buffer.from(name);
      const placeholder = Buffer.from(randomBytes(real.length).toString('hex').slice(0, real.length).replace(/^./, 'q'));
      if (placeholder.length !== real.length) throw new Error(`name too short to patch: ${name}`);
      patches.push([placeholder, real]);
      name = placeholder.toString();
    }
    const type = e.type ?? 'file';
    if (type === 'directory') {
      zip.addEmptyDirectory(name, { mode: (e.mode ?? 0o755) | 0o040000 });
    } else if (type === 'symlink' || type === 'hardlink') {
      zip.addBuffer(Buffer.from(e.linkname ?? 'target'), name, { mode: 0o120777, compress: false });
    } else if (type === 'device') {
      zip.addBuffer(Buffer.alloc(0), name, { mode: 0o020644 });
    } else {
      zip.addBuffer(bytesOf(e.content), name, { mode: 0o100000 | (e.mode ?? 0o644) });
    }
    if (e.declaredSize !== undefined) sizes.push([Buffer.from(name), e.declaredSize]);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream as AsyncIterable<Buffer>) chunks.push(c);
  const out = Buffer.concat(chunks);
  for (const [name, size] of sizes) patchDeclaredSize(out, name, size);
  for (const [placeholder, real] of patches) {
    for (let at = out.indexOf(placeholder); at >= 0; at = out.indexOf(placeholder, at + 1)) real.copy(out, at);
  }
  return out;
}

/** Writes `size` as the uncompressed size of the entry `name` in its local and central headers. */
function patchDeclaredSize(zip: Buffer, name: Buffer, size: number): void {
  for (let at = 0; at + 46 <= zip.length; at++) {
    const signature = zip.readUInt32LE(at);
    if (signature === 0x04034b50) {
      const length = zip.readUInt16LE(at + 26);
      if (zip.subarray(at + 30, at + 30 + length).equals(name)) zip.writeUInt32LE(size, at + 22);
    } else if (signature === 0x02014b50) {
      const length = zip.readUInt16LE(at + 28);
      if (zip.subarray(at + 46, at + 46 + length).equals(name)) zip.writeUInt32LE(size, at + 24);
    }
  }
}
