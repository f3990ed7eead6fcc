// Work directories left by a killed agent: orphaned build programs are killed at start,
// other processes that merely mention the folder are not.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@skiff/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { buildsDir, removeStaleWorkDirs } from './workdir.js';

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-workdir-test-'));
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** A program that waits forever, its pid written to `pidFile`, `arg` on its command line. */
const sleeper = (pidFile: string, arg: string) => [
  process.execPath,
  '-e',
  'require("fs").writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)',
  pidFile,
  arg,
];

/** Alive and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function pidIn(file: string): Promise<number> {
  const pid = await waitFor(() => (existsSync(file) ? Number(readFileSync(file, 'utf8')) || null : null), {
    timeoutMs: 10_000,
    what: `${file} to hold a pid`,
  });
  started.push(pid);
  return pid;
}

describe('removeStaleWorkDirs', () => {
  it('kills orphaned build groups and leaves other processes naming the folder alone', async () => {
    const work = join(buildsDir(dataDir), 'dep_1', 'source');
    mkdirSync(work, { recursive: true });
    const pids = join(dataDir, 'pids');
    mkdirSync(pids);

    // A build program whose agent is gone: its own session, reparented to init.
    spawn('setsid', ['-f', ...sleeper(join(pids, 'leader'), work)], { stdio: 'ignore' }).unref();
    // A builder's child that outlived its group leader (the leader's shell exits at once).
    const child = sleeper(join(pids, 'child'), `--context=${work}`).map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    spawn('setsid', ['-f', 'sh', '-c', `${child} & exit 0`], { stdio: 'ignore' }).unref();
    // Someone looking at the folder (its parent is alive: this test), in a session of its own.
    const [node, ...args] = sleeper(join(pids, 'looker'), work);
    const looker = spawn(node!, args, { stdio: 'ignore', detached: true });
    looker.unref();

    const [leader, orphanChild, lookerPid] = [await pidIn(join(pids, 'leader')), await pidIn(join(pids, 'child')), await pidIn(join(pids, 'looker'))];
    expect(lookerPid).toBe(looker.pid);
    // The orphans are reparented once their starters exit.
    await waitFor(() => [leader, orphanChild].every((pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === '1'), {
      timeoutMs: 10_000,
      what: 'the orphans to be reparented to init',
    });

    expect(removeStaleWorkDirs(dataDir)).toBe(2);
    await waitFor(() => !alive(leader) && !alive(orphanChild), { timeoutMs: 10_000, what: 'the orphaned builds to die' });
    expect(alive(lookerPid)).toBe(true);
    expect(existsSync(buildsDir(dataDir))).toBe(false);
  });
});
