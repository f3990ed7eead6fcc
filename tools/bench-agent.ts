/**
 * The agent's idle memory (issue 15, section 1), run by `tools/bench agent`: the bundled agent
 * started as tools/up starts it (AGENT_CMD), joined to a control plane and NATS
 * (apps/control-plane/src/testing/process-stack.ts), left idle; beside it a bare `node` that
 * only waits, started with the same binary and the same flags in the same run. Prints the
 * resident memory (VmRSS) and the V8 heap of both, and the ratio (target < 1.25).
 *
 * Both get tools/lib/memory-probe.cjs preloaded, which reports process.memoryUsage() on
 * SIGUSR2. Everything started is stopped and removed at the end, also after a failure.
 *
 *   BENCH_IDLE_SECONDS (20): how long both idle after the agent consumes its commands
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnOwned, waitFor } from '@skiff/testing';
import { type ProcessStack, repoRoot, startProcessStack } from '../apps/control-plane/src/testing/process-stack.js';
import { settledRss } from './lib/process-memory.js';

const TARGET = 1.25;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? '20');
if (!Number.isInteger(IDLE_SECONDS) || IDLE_SECONDS < 0) throw new Error('BENCH_IDLE_SECONDS must be a whole number of seconds');
const PROBE = join(repoRoot, 'tools/lib/memory-probe.cjs');

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const argvOf = (name: string) => process.env[name]?.split(' ').filter(Boolean);
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

interface Memory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
}

/** process.memoryUsage() of a process that preloads the probe, asked for through SIGUSR2. */
async function probe(pid: number, file: string): Promise<Memory> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  return waitFor(
    () => {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as Memory;
      } catch {
        return null;
      }
    },
    { timeoutMs: 10_000, intervalMs: 50, what: `the memory figures of pid ${pid}` },
  );
}

async function main() {
  // tools/bench passes AGENT_CMD: node, its flags, the bundle.
  const agentCmd = argvOf('SKIFF_BENCH_AGENT_CMD') ?? [process.execPath, 'dist/agent/main.mjs'];
  const [node, ...rest] = agentCmd;
  const flags = rest.slice(0, -1);
  const script = rest.at(-1)!;
  if (!existsSync(join(repoRoot, script))) throw new Error(`${script} is missing: tools/bench agent bundles it`);
  const work = mkdtempSync(join(tmpdir(), 'skiff-bench-agent-'));
  const files = { agent: join(work, 'agent.json'), bare: join(work, 'bare.json') };

  let stack: ProcessStack | undefined;
  let bare: ReturnType<typeof spawnOwned> | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      if (bare && bare.exitCode === null && bare.signalCode === null) bare.kill('SIGKILL');
      await stack?.close().catch((err: unknown) => log(`stopping the stack: ${String(err)}`));
      rmSync(work, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  try {
    log('starting NATS, the control plane (embedded database) and the local agent');
    stack = await startProcessStack({
      label: `bench-agent-${randomBytes(2).toString('hex')}`,
      controlPlaneArgv: argvOf('SKIFF_BENCH_CONTROL_PLANE_CMD'),
      agentArgv: [node!, ...flags, '--require', PROBE, script],
      agentEnv: { SKIFF_MEMORY_PROBE_FILE: files.agent },
    });
    const agentPid = stack.agent.pid!;
    bare = spawnOwned(node!, [...flags, '--require', PROBE, '-e', 'setInterval(() => {}, 1e9)'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SKIFF_MEMORY_PROBE_FILE: files.bare },
      stdio: 'ignore',
    });
    log(`agent joined and consuming; both idle for ${IDLE_SECONDS}s`);
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const [agentRss, bareRss] = await Promise.all([settledRss(agentPid), settledRss(bare.pid!)]);
    const agentMem = await probe(agentPid, files.agent);
    const bareMem = await probe(bare.pid!, files.bare);

    const ratio = agentRss / bareRss;
    const row = (...cells: string[]) => console.log(`${cells[0]!.padEnd(34)}${cells.slice(1).map((c) => c.padStart(12)).join('')}`);
    console.log();
    console.log(
      `Skiff agent idle: ${IDLE_SECONDS}s after it joined and consumes its commands; ${cpus().length} cores, node ${process.version}; ` +
        `both run as \`${[node, ...flags].join(' ')}\``,
    );
    row('measure', 'agent', 'bare node', 'ratio');
    row('RSS idle, VmRSS (MB)', agentRss.toFixed(1), bareRss.toFixed(1), `${ratio.toFixed(2)} ${ratio < TARGET ? 'ok' : 'MISS'}`);
    row('V8 heap used (MB)', mb(agentMem.heapUsed), mb(bareMem.heapUsed), '');
    row('V8 heap total (MB)', mb(agentMem.heapTotal), mb(bareMem.heapTotal), '');
    row('external (MB)', mb(agentMem.external), mb(bareMem.external), '');
    console.log(`(target: the agent under ${TARGET}x the bare node's RSS)`);
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
