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
 * programs run in sessions of their own (`detached`) with `setpriv --pdeathsig`, so a killed
 * agent's builds die with it; what survives (a builder's own children, or every build where
 * setpriv is missing) is reparented to init and runs on without its deadline. Those groups are
 * killed first, so a re-run never races an orphan.
 */
export function removeStaleWorkDirs(dataDir: string): number {
  const killed = killOrphanedBuilds(buildsDir(dataDir));
  rmSync(buildsDir(dataDir), { recursive: true, force: true });
  return killed;
}

/**
 * Kills the process groups of orphaned build programs: processes whose parent is init (pid 1),
 * that lead or belong to a group that is a whole session (as a build program's is), and that
 * name a work directory under `dir` in their arguments. Anything else mentioning the folder
 * (an operator's `du` or `ls` in a shell, whose parent is the shell and whose group is a job
 * of the shell's session) is left alone. Answers how many groups were killed.
 */
export function killOrphanedBuilds(dir: string): number {
  const marker = `${dir}/`;
  const own = processStatOf(String(process.pid));
  const groups = new Set<number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    const stat = processStatOf(pid);
    if (!stat || stat.parent !== 1 || stat.group <= 1 || stat.group !== stat.session || stat.group === own?.group) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (cmdline.split('\0').some((arg) => arg.startsWith(marker) || arg.includes(`=${marker}`))) groups.add(stat.group);
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

/** The parent, process group and session of a process (fields 4, 5 and 6 of /proc/<pid>/stat), or null. */
function processStatOf(pid: string): { parent: number; group: number; session: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [parent, group, session] = [Number(fields[1]), Number(fields[2]), Number(fields[3])];
    return Number.isInteger(parent) && Number.isInteger(group) && Number.isInteger(session) ? { parent, group, session } : null;
  } catch {
    return null;
  }
}
