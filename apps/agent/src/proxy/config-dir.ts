/**
 * The proxy's configuration directory (`<agent data>/proxy/config`, 0700): the three files of
 * proxy-files.ts (0600, replaced atomically), created with their defaults when missing.
 *
 * A path from a request is relative to the directory or absolute as `list` shows it. It is
 * taken literally (nothing decoded), resolved, and refused unless it stays inside the
 * directory without passing through a symbolic link and names a regular file of at most
 * 512 KiB; a NUL byte is refused. Only the three files' names can be written.
 */
import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writeFileAtomic } from './last-good.js';
import {
  DEFAULT_CONTENT,
  GLOBAL_FILE,
  MAX_FILE_BYTES,
  MIDDLEWARES_FILE,
  PLATFORM_FILE,
  PROXY_FILE_NAMES,
  ProxyFileError,
  isProxyFileName,
  parseProxyFile,
  type ProxyFileName,
  type ProxyFiles,
} from './proxy-files.js';
import { ProxyRequestRefused } from './refusal.js';

export interface FileTreeEntry {
  name: string;
  /** Absolute, on the server. */
  path: string;
  type: 'file' | 'directory';
  children?: FileTreeEntry[];
}

/** Bounds of a listing: the directory is the agent's, but an operator may put anything in it. */
const MAX_DEPTH = 8;
const MAX_ENTRIES = 1000;

const refusePath = (message: string): never => {
  throw new ProxyRequestRefused('path', message);
};

export class ProxyConfigDir {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** Creates the directory (0700) and each missing file with its default content (0600). */
  ensure(): void {
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    chmodSync(this.root, 0o700);
    for (const name of PROXY_FILE_NAMES) {
      if (lstatOrNull(join(this.root, name)) === null) writeFileAtomic(join(this.root, name), DEFAULT_CONTENT[name]);
    }
  }

  /** The directory's tree (its entries, sorted by name); symbolic links and special files are left out. */
  list(): FileTreeEntry[] {
    let count = 0;
    const walk = (dir: string, depth: number): FileTreeEntry[] => {
      const entries: FileTreeEntry[] = [];
      const names = readdirSync(dir).sort();
      for (const name of names) {
        if (++count > MAX_ENTRIES) break;
        const path = join(dir, name);
        const stats = lstatOrNull(path);
        if (stats?.isFile()) entries.push({ name, path, type: 'file' });
        else if (stats?.isDirectory()) entries.push({ name, path, type: 'directory', children: depth < MAX_DEPTH ? walk(path, depth + 1) : [] });
      }
      return entries;
    };
    return walk(this.root, 1);
  }

  /** The text of the regular file the path names (see the module comment). */
  read(path: string): string {
    const file = this.inside(path);
    const stats = lstatOrNull(file);
    if (stats === null) refusePath('no such file in the proxy configuration directory');
    return readRegular(file, refusePath);
  }

  /** Which of the three files the path names, or a refusal (field `path`). */
  writable(path: string): ProxyFileName {
    const file = this.inside(path);
    const name = relative(this.root, file);
    if (!isProxyFileName(name)) refusePath(`only ${PROXY_FILE_NAMES.join(', ')} can be written`);
    const stats = lstatOrNull(file);
    if (stats !== null && !stats.isFile()) refusePath(`${name} is not a regular file`);
    return name as ProxyFileName;
  }

  write(name: ProxyFileName, text: string): void {
    writeFileAtomic(join(this.root, name), text);
  }

  /**
   * The three files' values, `replace` standing in for the file it names (a write being
   * tried). A missing file has its default; one that does not hold what it must is a
   * ProxyFileError.
   */
  files(replace?: { name: ProxyFileName; text: string }): ProxyFiles {
    const text = (name: ProxyFileName): string => {
      if (replace?.name === name) return replace.text;
      const file = join(this.root, name);
      if (lstatOrNull(file) === null) return DEFAULT_CONTENT[name];
      return readRegular(file, (message) => {
        throw new ProxyFileError(`${name}: ${message}`);
      });
    };
    const value = <T>(parsed: { value: T } | { reason: string }): T => {
      if ('reason' in parsed) throw new ProxyFileError(parsed.reason);
      return parsed.value;
    };
    return {
      global: value(parseProxyFile(GLOBAL_FILE, text(GLOBAL_FILE))),
      platform: value(parseProxyFile(PLATFORM_FILE, text(PLATFORM_FILE))),
      middlewares: value(parseProxyFile(MIDDLEWARES_FILE, text(MIDDLEWARES_FILE))),
    };
  }

  /** The absolute path inside the directory the request's path names, no link on the way. */
  private inside(path: string): string {
    if (typeof path !== 'string' || path === '') refusePath('path is empty');
    if (path.includes('\0')) refusePath('path must not contain a NUL byte');
    const file = isAbsolute(path) ? resolve(path) : resolve(this.root, path);
    const rel = relative(this.root, file);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      refusePath(`path must name a file inside the proxy configuration directory ${this.root}`);
    }
    let at = this.root;
    const parts = rel.split(sep);
    for (const [i, part] of parts.entries()) {
      at = join(at, part);
      const stats = lstatOrNull(at);
      if (stats === null) break;
      if (stats.isSymbolicLink()) refusePath('path must not go through a symbolic link');
      if (i < parts.length - 1 && !stats.isDirectory()) refusePath('no such file in the proxy configuration directory');
    }
    return file;
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** The text of a regular file of at most 512 KiB, opened without following a link. */
function readRegular(file: string, refuse: (message: string) => never): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return refuse('no such file in the proxy configuration directory');
    if (code === 'ELOOP') return refuse('path must not go through a symbolic link');
    if (code === 'EISDIR') return refuse('path names a directory, not a file');
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) refuse('path names a directory, not a file');
    if (!stats.isFile()) refuse('path names something other than a regular file');
    if (stats.size > MAX_FILE_BYTES) refuse('the file is larger than 512 KiB');
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
