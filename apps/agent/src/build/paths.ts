/**
 * Paths a user names inside a fetched source (build path, containerfile, context, publish
 * directory): resolved inside the source and refused when they leave it, by `..`, by an
 * absolute path or through a symbolic link (the real path is checked).
 */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/** A path of the recipe that cannot be used; the message names the setting. */
export class SourcePathError extends Error {
  override name = 'SourcePathError';
}

/**
 * The real path of `rel` (relative to `base`, which is inside `root`), checked to stay in
 * `root` and to be a directory or a file as asked. `rel` may start with `/` (the source's
 * root is meant: `/app` is `app`); empty and `.` are `base` itself.
 */
export async function resolveInside(
  root: string,
  base: string,
  rel: string,
  what: { setting: string; kind: 'directory' | 'file' },
): Promise<string> {
  const cleaned = rel.trim().replace(/\\/g, '/');
  const segments = cleaned.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new SourcePathError(`${what.setting} "${rel}" must stay inside the source (no ..)`);
  const realRoot = await realpath(root);
  // A leading `/` means the source's root, not the server's.
  const from = cleaned.startsWith('/') ? root : base;
  const candidate = join(from, ...segments);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new SourcePathError(`${what.setting} "${rel}" does not exist in the source`);
  }
  if (!inside(realRoot, real)) throw new SourcePathError(`${what.setting} "${rel}" leads outside the source (through a link)`);
  const info = await stat(real);
  if (what.kind === 'directory' && !info.isDirectory()) throw new SourcePathError(`${what.setting} "${rel}" is not a directory`);
  if (what.kind === 'file' && !info.isFile()) throw new SourcePathError(`${what.setting} "${rel}" is not a file`);
  return real;
}

export function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}
