import { describe, expect, it } from 'vitest';
import {
  type AcceptedEntry,
  type ArchiveEntry,
  ArchiveChecker,
  ArchiveEntryError,
  DEFAULT_ARCHIVE_LIMITS,
  archiveFormatOf,
  entrySegments,
  flattenPrefix,
  isTarMetadata,
  safeFileMode,
  stripPrefix,
  tarEntryType,
  zipEntryMode,
  zipEntryType,
} from './archive-entries.js';

const file = (name: string, size = 10, extra: Partial<ArchiveEntry> = {}): ArchiveEntry => ({ name, type: 'file', size, ...extra });
const dir = (name: string): ArchiveEntry => ({ name, type: 'directory', size: 0 });

/** The refusal of `run`, as [entry, reason]. */
function refusal(run: () => unknown): [string, string] {
  try {
    run();
  } catch (err) {
    if (err instanceof ArchiveEntryError) return [err.entry, err.reason];
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('archiveFormatOf', () => {
  it('knows zip and gzip by their magic bytes', () => {
    expect(archiveFormatOf(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14]))).toBe('zip');
    expect(archiveFormatOf(Buffer.from([0x1f, 0x8b, 0x08, 0x00]))).toBe('tar.gz');
  });
  it('answers null for anything else, whatever it is called', () => {
    expect(archiveFormatOf(Buffer.from('hello world'))).toBeNull();
    expect(archiveFormatOf(Buffer.from([0x50, 0x4b]))).toBeNull();
    expect(archiveFormatOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))).toBeNull(); // an empty zip
    expect(archiveFormatOf(new Uint8Array())).toBeNull();
  });
});

describe('entrySegments', () => {
  it('normalises `.` and empty segments', () => {
    expect(entrySegments('a/b/c.txt')).toEqual(['a', 'b', 'c.txt']);
    expect(entrySegments('./a//b/')).toEqual(['a', 'b']);
    expect(entrySegments('./')).toEqual([]);
    expect(entrySegments('..a/b..')).toEqual(['..a', 'b..']);
  });
  it.each([
    ['../evil', '`..` segments'],
    ['a/../../evil', '`..` segments'],
    ['a/..', '`..` segments'],
    ['/etc/passwd', 'absolute paths'],
    ['C:/Windows/evil', 'drive letters'],
    ['c:evil', 'drive letters'],
    ['a\\..\\evil', 'backslash'],
    ['dir\\file', 'backslash'],
    ['bad\nname', 'control characters'],
    ['nul\u0000name', 'control characters'],
    ['', 'no name'],
  ])('refuses %j (%s)', (name, why) => {
    const [entry, reason] = refusal(() => entrySegments(name));
    expect(entry).toBe(name);
    expect(reason).toContain(why);
  });
  it('refuses over-long names', () => {
    expect(refusal(() => entrySegments('a'.repeat(20), 10))[1]).toContain('longer than 10');
  });
});

describe('ArchiveChecker', () => {
  it('accepts files and folders and answers their normalised paths', () => {
    const c = new ArchiveChecker();
    expect(c.accept(dir('./'))).toEqual({ path: '', type: 'directory' });
    expect(c.accept(dir('site/'))).toEqual({ path: 'site', type: 'directory' });
    expect(c.accept(file('./site/index.html'))).toEqual({ path: 'site/index.html', type: 'file' });
    expect(c.count).toBe(3);
  });

  it.each([
    ['symlink', 'links are not allowed'],
    ['hardlink', 'links are not allowed'],
    ['device', 'device entries'],
    ['fifo', 'fifo entries'],
    ['other', 'special entries'],
  ] as const)('refuses %s entries', (type, why) => {
    const [entry, reason] = refusal(() => new ArchiveChecker().accept({ name: 'x', type, size: 0 }));
    expect(entry).toBe('x');
    expect(reason).toContain(why);
  });

  it('refuses bad names through entrySegments, naming the entry', () => {
    const c = new ArchiveChecker();
    c.accept(file('ok.txt'));
    expect(refusal(() => c.accept(file('../evil.sh')))).toEqual(['../evil.sh', '`..` segments are not allowed']);
  });

  it('refuses a file without a name, duplicates, and files used as folders', () => {
    expect(refusal(() => new ArchiveChecker().accept(file('./')))[1]).toContain('needs a name');
    const c = new ArchiveChecker();
    c.accept(file('a'));
    expect(refusal(() => c.accept(file('./a')))[1]).toContain('twice');
    expect(refusal(() => c.accept(file('a/b')))).toEqual(['a/b', 'a is a file, not a folder']);
    expect(refusal(() => c.accept(dir('a/')))[1]).toContain('file of the same path');
    const d = new ArchiveChecker();
    d.accept(dir('x/'));
    expect(refusal(() => d.accept(file('x')))[1]).toContain('twice');
  });

  it('refuses more entries than the limit', () => {
    const c = new ArchiveChecker({ ...DEFAULT_ARCHIVE_LIMITS, maxEntries: 2 });
    c.accept(dir('a/'));
    c.accept(file('a/1'));
    expect(refusal(() => c.accept(file('a/2')))).toEqual(['a/2', 'the archive holds more than 2 entries']);
  });

  it('refuses a declared total past the limit', () => {
    const c = new ArchiveChecker({ ...DEFAULT_ARCHIVE_LIMITS, maxTotalBytes: 100 });
    c.accept(file('a', 60));
    expect(refusal(() => c.accept(file('b', 41)))[1]).toContain('more than 100 bytes');
  });

  it('refuses invalid declared sizes', () => {
    expect(refusal(() => new ArchiveChecker().accept(file('a', -1)))[1]).toContain('size');
    expect(refusal(() => new ArchiveChecker().accept(file('a', Number.NaN)))[1]).toContain('size');
  });

  it('refuses zip entries compressed past the ratio (zip bombs), but not small ones', () => {
    const limits = { ...DEFAULT_ARCHIVE_LIMITS, maxRatio: 100, ratioFloorBytes: 1000 };
    const c = new ArchiveChecker(limits);
    c.accept(file('small.txt', 999, { compressedSize: 1 }));
    c.accept(file('fine.bin', 100_000, { compressedSize: 1000 }));
    expect(refusal(() => c.accept(file('bomb.bin', 100_001, { compressedSize: 1000 })))[1]).toContain('zip bomb');
  });

  it('refuses an entry holding more bytes than it declared, or fewer', () => {
    const c = new ArchiveChecker();
    const e = file('liar.txt', 5);
    const { path } = c.accept(e);
    c.countBytes(e, path, 5);
    c.finishEntry(e, path);
    expect(refusal(() => c.countBytes(e, path, 1))).toEqual(['liar.txt', 'holds more than the 5 bytes it declares']);
    const short = file('short.txt', 5);
    c.accept(short);
    c.countBytes(short, 'short.txt', 3);
    expect(refusal(() => c.finishEntry(short, 'short.txt'))[1]).toContain('holds 3 bytes, not the 5');
  });
});

describe('zip and tar entry types', () => {
  const unix = 3 << 8;
  it('reads the Unix mode of zips made on Unix', () => {
    expect(zipEntryType('link', (0o120777 << 16) >>> 0, unix)).toBe('symlink');
    expect(zipEntryType('dev', (0o020644 << 16) >>> 0, unix)).toBe('device');
    expect(zipEntryType('fifo', (0o010644 << 16) >>> 0, unix)).toBe('fifo');
    expect(zipEntryType('sock', (0o140644 << 16) >>> 0, unix)).toBe('other');
    expect(zipEntryType('run.sh', (0o100755 << 16) >>> 0, unix)).toBe('file');
    expect(zipEntryType('d/', (0o040755 << 16) >>> 0, unix)).toBe('directory');
    expect(zipEntryMode((0o104755 << 16) >>> 0, unix)).toBe(0o4755);
  });
  it('falls back to the trailing slash elsewhere', () => {
    expect(zipEntryType('d/', 0x10, 0)).toBe('directory');
    expect(zipEntryType('f', (0o120777 << 16) >>> 0, 0)).toBe('file');
    expect(zipEntryMode(0x10, 0)).toBeUndefined();
  });
  it('maps tar types', () => {
    expect(tarEntryType('file')).toBe('file');
    expect(tarEntryType(undefined)).toBe('file');
    expect(tarEntryType('directory')).toBe('directory');
    expect(tarEntryType('symlink')).toBe('symlink');
    expect(tarEntryType('link')).toBe('hardlink');
    expect(tarEntryType('block-device')).toBe('device');
    expect(tarEntryType('fifo')).toBe('fifo');
    expect(tarEntryType('unknown')).toBe('other');
    expect(isTarMetadata('pax-header')).toBe(true);
    expect(isTarMetadata('file')).toBe(false);
  });
});

describe('flattening', () => {
  const f = (path: string): AcceptedEntry => ({ path, type: 'file' });
  const d = (path: string): AcceptedEntry => ({ path, type: 'directory' });
  it('flattens a single top-level folder', () => {
    expect(flattenPrefix([d(''), d('site'), f('site/index.html'), f('site/css/a.css')])).toBe('site');
    expect(flattenPrefix([f('site/index.html')])).toBe('site');
  });
  it('keeps archives with several top-level names, or a top-level file', () => {
    expect(flattenPrefix([f('site/index.html'), f('other/a')])).toBe('');
    expect(flattenPrefix([f('site/index.html'), f('README')])).toBe('');
    expect(flattenPrefix([f('index.html')])).toBe('');
    expect(flattenPrefix([d('empty')])).toBe('');
    expect(flattenPrefix([])).toBe('');
  });
  it('strips the flattened folder', () => {
    expect(stripPrefix('site/a/b', 'site')).toBe('a/b');
    expect(stripPrefix('site', 'site')).toBeNull();
    expect(stripPrefix('a/b', '')).toBe('a/b');
  });
});

describe('safeFileMode', () => {
  it('keeps only "executable or not", never setuid/setgid/sticky', () => {
    expect(safeFileMode(0o4755)).toBe(0o755);
    expect(safeFileMode(0o2700)).toBe(0o755);
    expect(safeFileMode(0o1666)).toBe(0o644);
    expect(safeFileMode(0o600)).toBe(0o644);
    expect(safeFileMode(undefined)).toBe(0o644);
  });
});
