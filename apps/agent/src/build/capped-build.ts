/**
 * One builder program run under the server's build cap (build-cap.ts): the limits are written
 * and named in the build log, the program runs in the builders' cgroup, and a failure while
 * the memory limit was hit ends with the cap as its reason. Without a cap (or where the
 * cgroups cannot be written, which the log says) the program runs uncapped.
 */
import type { BuildCap } from './build-cap.js';
import { BuildError } from './errors.js';

export async function runCapped(
  cap: BuildCap | undefined,
  log: (...lines: string[]) => Promise<void>,
  run: (cgroupProcs: string[] | undefined) => Promise<void>,
): Promise<void> {
  if (!cap) return run(undefined);
  const problem = await cap.apply();
  const cgroup = problem ? null : await cap.builderCgroup();
  const why = problem ?? (cgroup && 'problem' in cgroup ? cgroup.problem : null);
  await log(why ? `Build cap not applied: ${why}` : `Build cap of this server (all its builds together): ${cap.describe()}`);
  const procs = cgroup && 'procs' in cgroup ? cgroup.procs : undefined;
  const hitsBefore = await cap.memoryHits();
  try {
    await run(procs);
  } catch (err) {
    if (!(err instanceof BuildError) || cap.settings.memoryBytes <= 0) throw err;
    const hitsAfter = await cap.memoryHits();
    // A process the kernel's OOM killer ended exits 137 (SIGKILL; a BuildKit step says
    // `exit code: 137`); the counters of the parent cgroup do not always see a limit hit in
    // one of its children.
    const killed = /exit code: 137\b/.test(err.message) || err.exit?.code === 137 || err.exit?.signal === 'SIGKILL';
    if (killed || (hitsAfter !== null && hitsBefore !== null && hitsAfter > hitsBefore)) throw new BuildError(cap.memoryReason());
    throw err;
  }
}
