/**
 * A deployment's build work directory: `<agent data>/builds/<deploymentId>/` (mode 0700),
 * with `source/` (the fetched code) and `private/` (SSH keys, build secret files, generated
 * build files; never part of a build context). Removed after the build, also after a
 * failure; what an earlier agent process left is removed when the agent starts.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface WorkDir {
  root: string;
  /** Where the source is fetched to. */
  source: string;
  /** Files that must not reach the build context or a log (0700). */
  private: string;
  remove(): Promise<void>;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export const buildsDir = (dataDir: string) => join(dataDir, 'builds');

export async function openWorkDir(dataDir: string, deploymentId: string): Promise<WorkDir> {
  if (!SAFE_ID.test(deploymentId)) throw new Error('the deployment id cannot name a directory');
  await mkdir(buildsDir(dataDir), { recursive: true, mode: 0o700 });
  const root = join(buildsDir(dataDir), deploymentId);
  // A run of the same deployment that an agent stop cut short starts over.
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { mode: 0o700 });
  const source = join(root, 'source');
  const priv = join(root, 'private');
  await mkdir(source, { mode: 0o755 });
  await mkdir(priv, { mode: 0o700 });
  return { root, source, private: priv, remove: () => rm(root, { recursive: true, force: true }) };
}

/**
 * Removes every work directory (at agent start, when no build of this process runs). Build
 * programs run in process groups of their own, so an agent that was killed leaves them
 * running without their deadline; each group whose program names a work directory in its
 * arguments is killed first, so a re-run never races an orphan.
 */
export function removeStaleWorkDirs(dataDir: string): number {
  const killed = killOrphanedBuilds(buildsDir(dataDir));
  rmSync(buildsDir(dataDir), { recursive: true, force: true });
  return killed;
}

function killOrphanedBuilds(dir: string): number {
  const marker = `${dir}/`;
  const ownGroup = processGroupOf(String(process.pid));
  const groups = new Set<number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (!cmdline.split('\0').some((arg) => arg.startsWith(marker) || arg.includes(`=${marker}`))) continue;
    const group = processGroupOf(pid);
    if (group !== null && group > 1 && group !== ownGroup) groups.add(group);
  }
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return groups.size;
}

/** The process group of a process (field 5 of /proc/<pid>/stat), or null. */
function processGroupOf(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const group = Number(fields[2]);
    return Number.isInteger(group) ? group : null;
  } catch {
    return null;
  }
}
