/**
 * A compose stack's directory on the server, `<agent data>/compose/<appName>/` (0700):
 *
 *   code/               the source: the raw file as `docker-compose.yml` (or at the compose
 *                       path), or a git checkout. Replaced as a whole by each deploy: the new
 *                       source is fetched into `.incoming/`, then swapped in (`code/` →
 *                       `.previous/`, `.incoming/` → `code/`, `.previous/` removed), so a
 *                       failed fetch or conversion leaves the running stack's files as they
 *                       were. The converted file (CONVERTED_FILE) and `.env` (0600) are
 *                       written beside the compose file, so Compose resolves the file's other
 *                       relative paths (build contexts, `env_file`, config files) as it would
 *                       in the repository.
 *   files/              kept across deploys: relative bind mounts of the services live here
 *                       (libs/domain keepBindMounts), never deleted by a deploy. A remove
 *                       keeps it unless the volumes go too, or it is empty (then the
 *                       whole directory goes).
 *   stack.json          what later commands need: the compose type and where the files are.
 *   .incoming/ .previous/ .private/   a deploy's work (`.private`: 0700, an SSH key for the
 *                       clone's duration); left-overs of an interrupted deploy are removed
 *                       when the next one starts.
 */
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { refuseProjectName } from '@skiff/domain';

export const CONVERTED_FILE = 'docker-compose.skiff.yml';
export const ENV_FILE = '.env';
export const DEFAULT_COMPOSE_PATH = 'docker-compose.yml';

/** Directory names Docker Compose takes as a project name: lowercase letters, digits, `-`, `_`. */

export interface StackDir {
  root: string;
  code: string;
  files: string;
  state: string;
  incoming: string;
  previous: string;
  private: string;
}

export const composeDataDir = (dataDir: string) => join(dataDir, 'compose');

export function stackDirOf(dataDir: string, appName: string): StackDir {
  const refusal = refuseProjectName(appName);
  if (refusal) throw new Error(refusal);
  const root = join(composeDataDir(dataDir), appName);
  return {
    root,
    code: join(root, 'code'),
    files: join(root, 'files'),
    state: join(root, 'stack.json'),
    incoming: join(root, '.incoming'),
    previous: join(root, '.previous'),
    private: join(root, '.private'),
  };
}

/** Makes the stack's directory, and empty `.incoming/` and `.private/` for a new deploy. */
export async function openDeployDirs(dir: StackDir): Promise<void> {
  await mkdir(dir.root, { recursive: true, mode: 0o700 });
  await removeDeployWork(dir);
  await mkdir(dir.incoming, { mode: 0o755 });
  await mkdir(dir.private, { mode: 0o700 });
  await mkdir(dir.files, { recursive: true, mode: 0o755 });
}

/** Removes what a deploy works in (its fetched source, if not swapped in; its private files). */
export async function removeDeployWork(dir: StackDir): Promise<void> {
  await Promise.all([dir.incoming, dir.previous, dir.private].map((path) => rm(path, { recursive: true, force: true })));
}

/** Swaps the fetched source in as `code/`. */
export async function swapInCode(dir: StackDir): Promise<void> {
  await rm(dir.previous, { recursive: true, force: true });
  if (await exists(dir.code)) await rename(dir.code, dir.previous);
  await rename(dir.incoming, dir.code);
  await rm(dir.previous, { recursive: true, force: true });
}

/**
 * Removes the stack's directory; with `keepFiles`, everything but `files/` when it holds
 * anything (the directory goes as a whole when it does not).
 */
export async function removeStackDir(dir: StackDir, options: { keepFiles: boolean }): Promise<void> {
  if (!options.keepFiles || (await isEmptyOrMissing(dir.files))) {
    await rm(dir.root, { recursive: true, force: true });
    return;
  }
  await Promise.all([dir.code, dir.state].map((path) => rm(path, { recursive: true, force: true })));
  await removeDeployWork(dir);
}

async function isEmptyOrMissing(path: string): Promise<boolean> {
  try {
    return (await readdir(path)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
