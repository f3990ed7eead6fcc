// Runs the README's walkthrough as a reader would: Skiff started with tools/up in a fresh data
// directory, then every ```sh block of every section from "Deploy a sample application" on, in
// order, in one bash session (variables and functions carry over, as in a terminal), each
// step's output checked against what the README shows below it. A `tools/up` block restarts
// Skiff with the variables its line sets. Blocks marked `<!-- walkthrough: skip … -->` are not
// run. Only the API, gRPC and NATS ports are moved (SKIFF points the blocks at the API).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ToolsUp, freePort, startToolsUp, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Section, type Step, mismatch, walkthroughSections } from './lib/readme-walkthrough.js';

const root = new URL('../', import.meta.url).pathname;
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const sections = walkthroughSections(readme);
const workDir = mkdtempSync(join(tmpdir(), 'skiff-readme-'));
// `.data` inside the directory the blocks run in, as in a checkout: `cat .data/initial-api-key` works.
const dataDir = join(workDir, '.data');
const STEP_TIMEOUT_MS = 240_000;
const END = '\x1ewalkthrough-step-end';

// What the walkthrough makes on the host, by the names the README gives it; removed at the end
// whatever happened (a section that failed did not clean up after itself).
const names = [...new Set([...readme.matchAll(/"(?:appName|volumeName)":"([a-z][a-z0-9-]*)"/g)].map((m) => m[1]!))];
const files = [...new Set([...readme.matchAll(/(?<![\w.-])(\/tmp\/[\w./-]+?)(?=[\s'"),]|$)/gm)].map((m) => m[1]!.replace(/\/$/, '')))];

let ports: { api: number; grpc: number; nats: number };
let up: ToolsUp | undefined;
let shell: ChildProcess | undefined;
let shellOutput = '';
let stuck = false;
const before = { services: new Set<string>(), containers: new Set<string>(), volumes: new Set<string>(), networks: new Set<string>() };

const docker = (...args: string[]) => {
  try {
    return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
const listed = () => ({
  services: docker('service', 'ls', '--format', '{{.Name}}'),
  containers: docker('ps', '-a', '--format', '{{.Names}}'),
  volumes: docker('volume', 'ls', '--format', '{{.Name}}'),
  networks: docker('network', 'ls', '--format', '{{.Name}}'),
});
/** A Docker object the walkthrough made: named after one of its workloads, or the proxy. */
const ours = (name: string) =>
  name === 'skiff-proxy' || name === 'skiff-proxy-data' || names.some((n) => name === n || new RegExp(`^${n}[-_.]`).test(name));

async function startUp(env: Record<string, string>) {
  up = await startToolsUp({ root, dataDir, ports, env });
}

async function stopUp() {
  await up?.stop();
}

/** The reader's terminal: one bash that evaluates each step it is sent (NUL-terminated on fd 3). */
function startShell() {
  shell = spawn(
    'bash',
    ['--noprofile', '--norc', '-c', `exec 3<&0 </dev/null 2>&1; while IFS= read -r -d '' step <&3; do eval "$step"; printf '\\n${END} %s\\n' "$?"; done`],
    {
      cwd: workDir,
      env: { ...process.env, SKIFF: `http://127.0.0.1:${ports.api}/api`, DATABASE_URL: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // its own process group: what the steps leave running goes with it
    },
  );
  shell.stdout!.on('data', (d) => (shellOutput += d));
  shell.stderr!.on('data', (d) => (shellOutput += d));
}

async function runStep(step: Step): Promise<{ output: string; exitCode: number }> {
  const from = shellOutput.length;
  shell!.stdin!.write(`${step.code}\n\0`);
  const end = await waitFor(
    () => {
      const m = new RegExp(`\\n${END} (\\d+)\\n`).exec(shellOutput.slice(from));
      return m ? { at: m.index, exitCode: Number(m[1]) } : null;
    },
    { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 100, what: 'the step to end' },
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n--- output so far ---\n${shellOutput.slice(from)}`);
  });
  const output = shellOutput.slice(from, from + end.at);
  shellOutput = shellOutput.slice(0, from + end.at); // the marker is not the reader's
  return { output, exitCode: end.exitCode };
}

/** Runs every step of the section (a reader would read on too), then fails naming each step that did not do what the README shows. */
async function runSection(section: Section) {
  const wrong: string[] = [];
  for (const block of section.blocks) {
    if (block.kind === 'skip') continue;
    if (block.kind === 'up') {
      await stopUp();
      await startUp(block.env).catch((e: Error) => {
        stuck = true;
        throw new Error(`README section "${section.title}": ${block.line} did not start Skiff: ${e.message}`);
      });
      continue;
    }
    for (const step of block.steps) {
      const { output, exitCode } = await runStep(step).catch((e: Error) => {
        stuck = true; // the shell is still busy with it: nothing after it can run
        throw new Error(`README section "${section.title}": the step below did not end: ${e.message}\n--- step ---\n${step.code}\n\n${wrong.join('\n\n')}`);
      });
      const why = mismatch(step, output, exitCode);
      if (why) {
        wrong.push(
          `the step below does not do what the README shows: ${why}\n` +
            `--- step ---\n${step.code}\n--- README shows ---\n${step.expected.join('\n') || '(nothing)'}\n--- output (exit ${exitCode}) ---\n${output}`,
        );
      }
    }
  }
  if (wrong.length > 0) throw new Error(`README section "${section.title}": ${wrong.join('\n\n')}`);
}

beforeAll(async () => {
  mkdirSync(dataDir, { mode: 0o700 });
  // The checkout's packages, as after `npm install` (the S3 server of "Back up and restore a database" runs from them).
  symlinkSync(join(root, 'node_modules'), join(workDir, 'node_modules'));
  ports = { api: await freePort(), grpc: await freePort(), nats: await freePort() };
  const now = listed();
  for (const [kind, set] of Object.entries(before)) for (const n of now[kind as keyof typeof now]) set.add(n);
  await startUp({});
  startShell();
}, 240_000);

afterAll(async () => {
  if (shell?.pid) {
    try {
      process.kill(-shell.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await stopUp();
  const now = listed();
  const made = (kind: keyof typeof before) => now[kind].filter((n) => !before[kind].has(n) && ours(n));
  for (const s of made('services')) docker('service', 'rm', s);
  for (const c of made('containers')) docker('rm', '-f', '-v', c);
  await waitFor(() => docker('ps', '-a', '--format', '{{.Names}}').filter((n) => !before.containers.has(n) && ours(n)).length === 0, {
    timeoutMs: 60_000,
    what: "the walkthrough's containers to go",
  }).catch(() => {});
  for (const v of made('volumes')) docker('volume', 'rm', '-f', v);
  for (const n of made('networks')) docker('network', 'rm', n);
  for (const image of docker('image', 'ls', '--format', '{{.Repository}}:{{.Tag}}')) {
    if (names.includes(image.split(':')[0]!)) docker('image', 'rm', '-f', image);
  }
  for (const f of files) rmSync(f, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
}, 240_000);

describe('the README walkthrough, run as written', () => {
  it('has walkthrough sections with steps to run, and few skipped blocks', () => {
    const blocks = sections.flatMap((s) => s.blocks);
    expect(sections.length).toBeGreaterThan(5);
    // Each skipped block needs what no machine of the suite has (a second machine, an account at a
    // hosted service, a whole engine to clean) or is a sketch with placeholders; its reason names
    // the test that runs it instead. More than these would mean the README stopped being runnable.
    expect(blocks.filter((b) => b.kind === 'skip').length).toBeLessThanOrEqual(8);
  });

  // Sections made only of blocks the README marks as not runnable here have nothing to run.
  for (const section of sections.filter((s) => s.blocks.some((b) => b.kind !== 'skip'))) {
    // A section that failed may have left what the next one needs (a port) taken: the next still
    // runs, and its own failure says so.
    it(section.title, async () => {
      if (stuck) throw new Error("not run: the shell is still busy with an earlier section's command that did not end");
      await runSection(section);
    }, 900_000);
  }

  it('leaves no service, git daemon or temporary file of its own behind', async () => {
    const services = await waitFor(
      () => {
        const left = docker('service', 'ls', '--format', '{{.Name}}').filter((n) => names.includes(n));
        return left.length === 0 ? [] : null;
      },
      { timeoutMs: 60_000, what: "the walkthrough's services to be removed" },
    ).catch(() => docker('service', 'ls', '--format', '{{.Name}}').filter((n) => names.includes(n)));
    expect(services).toEqual([]);
    expect(files.filter((f) => existsSync(f))).toEqual([]);
    // The shell's process group: bash itself, and anything a step left running (a git daemon).
    const group = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,args='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter(([pid, pgid]) => Number(pgid) === shell!.pid && Number(pid) !== shell!.pid)
      .map((fields) => fields.slice(2).join(' '));
    expect(group).toEqual([]);
  }, 120_000);
});
