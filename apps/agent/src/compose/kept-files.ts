/**
 * Makes the stack's `files/` ready for the bind mounts keepBindMounts moved there, before the
 * new source is swapped in:
 * - what the source has at a mounted path is copied over the kept copy: a file is rewritten in
 *   place (containers that mount it see the new content), a directory is merged (the source's
 *   files written, everything else in it left as the services wrote it);
 * - a mounted path the source lacks is created as an empty directory when missing (Compose's
 *   long syntax and Swarm stacks refuse a missing bind source);
 * - nothing under `files/` is ever deleted. A kept path whose kind differs from the source's (a
 *   directory where the source now has a file) fails the deploy, so no data is overwritten.
 * Paths are checked to stay inside `files/` through links too.
 */
import { copyFile, cp, lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { KeptMount } from '@skiff/domain';
import { inside } from '../build/paths.js';
import { ComposeRunError } from './cli.js';

export async function prepareKeptMounts(kept: readonly KeptMount[], sourceRoot: string, filesDir: string): Promise<string[]> {
  const lines: string[] = [];
  const realFiles = await realpath(filesDir);
  for (const mount of kept) {
    const shown = `files/${relative(filesDir, mount.keptPath)}`.replace(/\/$/, '');
    await checkInside(realFiles, mount.keptPath, shown);
    const from = mount.sourcePath === null ? null : join(sourceRoot, mount.sourcePath);
    const source = from === null ? null : await kindOf(from);
    const target = await kindOf(mount.keptPath);
    if (source === null || source === 'other') {
      if (target === null) {
        await mkdir(mount.keptPath, { recursive: true, mode: 0o755 });
        lines.push(`Created ${shown} (kept across deploys)`);
      }
      continue;
    }
    if (target !== null && target !== source) {
      throw new ComposeRunError(
        `${shown} is a ${target === 'directory' ? 'directory' : 'file'} on the server but the source has a ${source === 'directory' ? 'directory' : 'file'} there: move it away first (it is kept, never overwritten)`,
      );
    }
    if (source === 'directory') {
      await mkdir(mount.keptPath, { recursive: true, mode: 0o755 });
      await cp(from!, mount.keptPath, { recursive: true, force: true, verbatimSymlinks: true });
    } else {
      await mkdir(dirname(mount.keptPath), { recursive: true, mode: 0o755 });
      await copyFile(from!, mount.keptPath);
    }
    lines.push(`Copied the source's ${mount.sourcePath || '.'} to ${shown}`);
  }
  return lines;
}

async function kindOf(path: string): Promise<'file' | 'directory' | 'other' | null> {
  try {
    const info = await lstat(path);
    return info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
  } catch {
    return null;
  }
}

/** The nearest existing ancestor of `path` (itself included) must resolve inside `files/`. */
async function checkInside(realFiles: string, path: string, shown: string): Promise<void> {
  let current = path;
  for (;;) {
    try {
      const real = await realpath(current);
      if (!inside(realFiles, real)) throw new ComposeRunError(`${shown} leads outside the stack's files directory (through a link)`);
      return;
    } catch (err) {
      if (err instanceof ComposeRunError) throw err;
      const parent = dirname(current);
      if (parent === current) return;
      current = parent;
    }
  }
}
