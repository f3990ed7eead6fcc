import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/**
 * Spawns a server a test needs so that it cannot outlive the test process: the kernel kills
 * it when its parent dies (util-linux's `setpriv --pdeathsig`, which then execs the program,
 * so the pid is the program's), also when the test worker is killed before its clean-up runs.
 * Tests still stop what they start; this covers the runs that never get to.
 */
export function spawnOwned(program: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  if (options.detached) throw new Error('spawnOwned: a detached process would outlive its test by design');
  return SETPRIV ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', program, ...args], options) : spawn(program, args, options);
}
