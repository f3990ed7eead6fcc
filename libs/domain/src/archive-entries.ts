/**
 * The safety rules for uploaded archives (`drop` sources; REFERENCE.md "Drop archives"),
 * as pure checks over an archive's entry list. The control plane applies them to an upload
 * before accepting it; the agent applies them again while it extracts. Readers of the two
 * formats (zip, tar.gz) describe each entry as an `ArchiveEntry`; `ArchiveChecker` accepts
 * or refuses it, naming the first offending entry.
 */

export type ArchiveFormat = 'zip' | 'tar.gz';

export type ArchiveEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'device' | 'fifo' | 'other';

export interface ArchiveEntry {
  /** The entry's name exactly as the archive stores it. */
  name: string;
  type: ArchiveEntryType;
  /** Uncompressed size the archive declares (0 for directories). */
  size: number;
  /** Compressed size (zip only), for the compression-ratio check. */
  compressedSize?: number;
  /** Unix permission bits, when the archive records them. */
  mode?: number;
}

export interface ArchiveLimits {
  /** Most entries (files and directories) one archive may hold. */
  maxEntries: number;
  /** Most uncompressed bytes, all files together. */
  maxTotalBytes: number;
  /** Highest uncompressed/compressed ratio of one zip entry of at least `ratioFloorBytes`. */
  maxRatio: number;
  /** Entries smaller than this are not held to `maxRatio` (small text compresses well). */
  ratioFloorBytes: number;
  /** Longest entry name, in characters. */
  maxNameLength: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 20_000,
  maxTotalBytes: 1024 * 1024 * 1024,
  maxRatio: 200,
  ratioFloorBytes: 1024 * 1024,
  maxNameLength: 1024,
};

/** An archive refused by the rules: `entry` is the offending entry's name as stored. */
export class ArchiveEntryError extends Error {
  constructor(
    readonly entry: string,
    readonly reason: string,
  ) {
    super(`${JSON.stringify(entry)}: ${reason}`);
    this.name = 'ArchiveEntryError';
  }
}

/** The archive format by its first bytes (never by a file name): zip or gzip, else null. */
export function archiveFormatOf(head: Uint8Array): ArchiveFormat | null {
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'zip';
  if (head.length >= 3 && head[0] === 0x1f && head[1] === 0x8b && head[2] === 0x08) return 'tar.gz';
  return null;
}

const S_IFMT = 0o170000;
const TYPE_BY_MODE: Record<number, ArchiveEntryType> = {
  0o100000: 'file',
  0o040000: 'directory',
  0o120000: 'symlink',
  0o020000: 'device',
  0o060000: 'device',
  0o010000: 'fifo',
  0o140000: 'other',
};

/**
 * A zip entry's type. Zips made on Unix (high byte of "version made by" = 3) carry the
 * file's mode in the upper 16 bits of the external attributes: links, devices and sockets
 * are found there. Otherwise a trailing `/` marks a directory.
 */
export function zipEntryType(name: string, externalAttributes: number, versionMadeBy: number): ArchiveEntryType {
  const unixMode = (externalAttributes >>> 16) & 0xffff;
  if (versionMadeBy >>> 8 === 3 && unixMode !== 0) {
    const type = TYPE_BY_MODE[unixMode & S_IFMT];
    if (type && type !== 'file') return type;
    if (!type && (unixMode & S_IFMT) !== 0) return 'other';
  }
  return name.endsWith('/') ? 'directory' : 'file';
}

/** The permission bits of a zip entry made on Unix, else undefined. */
export function zipEntryMode(externalAttributes: number, versionMadeBy: number): number | undefined {
  const unixMode = (externalAttributes >>> 16) & 0xffff;
  return versionMadeBy >>> 8 === 3 && unixMode !== 0 ? unixMode & 0o7777 : undefined;
}

/** A tar header's type (tar-stream's names), mapped to ours. */
export function tarEntryType(type: string | null | undefined): ArchiveEntryType {
  switch (type ?? 'file') {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'directory':
      return 'directory';
    case 'symlink':
      return 'symlink';
    case 'link':
      return 'hardlink';
    case 'character-device':
    case 'block-device':
      return 'device';
    case 'fifo':
      return 'fifo';
    default:
      return 'other';
  }
}

/** Tar headers that describe the next entry (or the archive) rather than being one. */
export function isTarMetadata(type: string | null | undefined): boolean {
  return type === 'pax-header' || type === 'pax-global-header' || type === 'gnu-long-path' || type === 'gnu-long-link-path';
}

/**
 * The entry's path as relative segments, or an ArchiveEntryError. Refused: empty names,
 * control characters, backslashes, absolute paths, drive letters, `..` segments. `.` and
 * empty segments are dropped (`./a//b` is `a/b`); the archive's own root (`./`) is [].
 */
export function entrySegments(name: string, maxNameLength = DEFAULT_ARCHIVE_LIMITS.maxNameLength): string[] {
  if (name.length === 0) throw new ArchiveEntryError(name, 'the entry has no name');
  if (name.length > maxNameLength) throw new ArchiveEntryError(name, `the name is longer than ${maxNameLength} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new ArchiveEntryError(name, 'the name contains control characters');
  if (name.includes('\\')) throw new ArchiveEntryError(name, 'the name contains a backslash');
  if (name.startsWith('/')) throw new ArchiveEntryError(name, 'absolute paths are not allowed');
  if (/^[A-Za-z]:/.test(name)) throw new ArchiveEntryError(name, 'drive letters are not allowed');
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new ArchiveEntryError(name, '`..` segments are not allowed');
  return segments;
}

export interface AcceptedEntry {
  /** The normalised relative path (`a/b`); '' for the archive's root directory. */
  path: string;
  type: 'file' | 'directory';
}

/**
 * Applies the rules to an archive's entries, one after the other. Stateful: it counts
 * entries and bytes, and remembers paths to refuse duplicates and files used as folders.
 * Readers call `accept` for each entry header, then `countBytes` as the entry's content is
 * actually read (declared sizes can lie).
 */
export class ArchiveChecker {
  private entries = 0;
  private declaredTotal = 0;
  private actualTotal = 0;
  private readonly actualByEntry = new Map<string, number>();
  private readonly files = new Set<string>();
  private readonly directories = new Set<string>();

  constructor(readonly limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS) {}

  accept(entry: ArchiveEntry): AcceptedEntry {
    const { name } = entry;
    const segments = entrySegments(name, this.limits.maxNameLength);
    switch (entry.type) {
      case 'symlink':
      case 'hardlink':
        throw new ArchiveEntryError(name, 'links are not allowed');
      case 'device':
      case 'fifo':
      case 'other':
        throw new ArchiveEntryError(name, `${entry.type === 'other' ? 'special' : entry.type} entries are not allowed`);
    }
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) throw new ArchiveEntryError(name, `the archive holds more than ${this.limits.maxEntries} entries`);
    const path = segments.join('/');
    if (entry.type === 'directory') {
      if (this.files.has(path)) throw new ArchiveEntryError(name, 'a file of the same path comes earlier');
      this.checkParents(name, segments);
      if (path) this.directories.add(path);
      return { path, type: 'directory' };
    }
    if (segments.length === 0) throw new ArchiveEntryError(name, 'a file needs a name');
    if (this.files.has(path) || this.directories.has(path)) throw new ArchiveEntryError(name, 'the path appears twice');
    this.checkParents(name, segments);
    const size = entry.size;
    if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveEntryError(name, 'the declared size is not valid');
    this.declaredTotal += size;
    if (this.declaredTotal > this.limits.maxTotalBytes) {
      throw new ArchiveEntryError(name, `the archive unpacks to more than ${this.limits.maxTotalBytes} bytes`);
    }
    const compressed = entry.compressedSize;
    if (compressed !== undefined && size >= this.limits.ratioFloorBytes && size > compressed * this.limits.maxRatio) {
      throw new ArchiveEntryError(name, `compressed more than ${this.limits.maxRatio} times (a zip bomb?)`);
    }
    this.files.add(path);
    this.actualByEntry.set(path, 0);
    return { path, type: 'file' };
  }

  /**
   * Counts `bytes` more read from the file entry `path` (as `accept` answered it). Refuses an
   * entry that holds more than it declared, and an archive past the total limit.
   */
  countBytes(entry: ArchiveEntry, path: string, bytes: number): void {
    const sofar = (this.actualByEntry.get(path) ?? 0) + bytes;
    this.actualByEntry.set(path, sofar);
    if (sofar > entry.size) throw new ArchiveEntryError(entry.name, `holds more than the ${entry.size} bytes it declares`);
    this.actualTotal += bytes;
    if (this.actualTotal > this.limits.maxTotalBytes) {
      throw new ArchiveEntryError(entry.name, `the archive unpacks to more than ${this.limits.maxTotalBytes} bytes`);
    }
  }

  /** Called once an entry's content was read to its end: refuses one shorter than declared. */
  finishEntry(entry: ArchiveEntry, path: string): void {
    const read = this.actualByEntry.get(path) ?? 0;
    if (read !== entry.size) throw new ArchiveEntryError(entry.name, `holds ${read} bytes, not the ${entry.size} it declares`);
  }

  /** Entries accepted so far. */
  get count(): number {
    return this.entries;
  }

  private checkParents(name: string, segments: string[]): void {
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (this.files.has(parent)) throw new ArchiveEntryError(name, `${parent} is a file, not a folder`);
    }
  }
}

/**
 * The single top-level folder to flatten, or '' when there is none: when every accepted
 * path lies inside one folder (`site/index.html`, `site/css/a.css`), extraction drops that
 * first segment. A lone top-level file, or two top-level names, means no flattening.
 */
export function flattenPrefix(entries: AcceptedEntry[]): string {
  let top: string | undefined;
  let nested = false;
  for (const e of entries) {
    if (e.path === '') continue;
    const slash = e.path.indexOf('/');
    const first = slash < 0 ? e.path : e.path.slice(0, slash);
    if (slash < 0 && e.type === 'file') return '';
    if (top === undefined) top = first;
    else if (top !== first) return '';
    if (slash >= 0) nested = true;
  }
  return top !== undefined && nested ? top : '';
}

/** `path` with the flattened folder removed; null for the folder itself (nothing to create). */
export function stripPrefix(path: string, prefix: string): string | null {
  if (!prefix) return path;
  if (path === prefix) return null;
  return path.slice(prefix.length + 1);
}

/** Permission bits to create an extracted file with: 0755 when any execute bit is set, else 0644; never setuid, setgid or sticky. */
export function safeFileMode(mode: number | undefined): number {
  return mode !== undefined && (mode & 0o111) !== 0 ? 0o755 : 0o644;
}
