/**
 * An application's file mounts on the agent: written under `<dataDir>/applications/<id>/files/`
 * and bind-mounted read-only into its tasks. Each deploy writes the folder anew (files the
 * application no longer mounts go). Paths come from the control plane, and are checked again:
 * relative, no `.` or `..` segment, and every directory is made here, so none is a link (a
 * link met on the way, or as the file, is refused: nothing is followed). Contents are secrets:
 * never logged.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileMount } from '@skiff/proto';
import type { VolumeInput } from '@skiff/domain';

export class FileMountError extends Error {
  override name = 'FileMountError';
}

const WORKLOAD_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The folder of one application on the agent (its `files/` only, today). */
export function applicationDir(dataDir: string, workloadId: string): string {
  if (!WORKLOAD_ID.test(workloadId)) throw new FileMountError(`workload id "${workloadId}" cannot name a folder`);
  return join(dataDir, 'applications', workloadId);
}

/** The folder of one application's files. */
export const applicationFilesDir = (dataDir: string, workloadId: string) => join(applicationDir(dataDir, workloadId), 'files');

/** The segments of a file mount's path; throws FileMountError when it could leave its folder. */
export function fileSegments(path: string): string[] {
  const segments = path.split('/');
  if (path.startsWith('/') || path.includes('\0') || path.includes('\\') || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new FileMountError(`file mount path "${path.slice(0, 300)}" must be relative, without "." or ".." segments`);
  }
  if (segments.some((s) => Buffer.byteLength(s, 'utf8') > 255)) throw new FileMountError(`file mount path "${path.slice(0, 300)}…" has a name longer than 255 bytes`);
  return segments;
}

/** The binds of the files (read-only), in the command's order. Pure. */
export function fileBinds(dir: string, files: readonly FileMount[]): VolumeInput[] {
  return files.map((f) => ({ source: join(dir, ...fileSegments(f.path)), target: f.target, readOnly: true }));
}

/** Writes the files into a fresh `dir` (its previous content removed). */
export async function writeFileMounts(dir: string, files: readonly FileMount[]): Promise<void> {
  await removeFilesDir(dir);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  for (const file of files) await writeFileInto(dir, file);
}

/**
 * Writes one file at its relative path under `dir`, which exists: missing folders are made,
 * and a link met on the way or in the file's place is refused (FileMountError), never followed.
 */
export async function writeFileInto(dir: string, file: Pick<FileMount, 'path' | 'content'>): Promise<void> {
  const segments = fileSegments(file.path);
  let at = dir;
  for (const segment of segments.slice(0, -1)) {
    at = join(at, segment);
    await ensurePlainDir(at);
  }
  const target = join(at, segments[segments.length - 1]!);
  // O_NOFOLLOW: a link in the file's place is an error, never a way out of the folder.
  const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ELOOP' || err.code === 'EISDIR') throw new FileMountError(`file mount path "${file.path}" is taken by a directory or link`);
    throw err;
  });
  try {
    await handle.writeFile(file.content, 'utf8');
  } finally {
    await handle.close();
  }
}

/** Removes a folder and what it holds (links are removed, not followed); nothing when there is none. */
export async function removeFilesDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

async function ensurePlainDir(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o755 });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stat = await lstat(path);
  if (!stat.isDirectory()) throw new FileMountError(`"${path}" is not a directory`);
}
