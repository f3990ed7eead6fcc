/**
 * The metrics cost benchmark (issue 17, section 3), run by `tools/bench agent-metrics`: N
 * busybox containers labelled as Skiff's (`skiff.managed=true`, named `skiff-bench-<run>-<i>`,
 * removed at the end, also on failure or Ctrl-C), then the local agent (the bundle, as
 * tools/up runs it) started twice beside NATS and the control plane: once sampling every
 * SKIFF_METRICS_INTERVAL_SECONDS (10 s by default), once with sampling off (the floor). For
 * each, the agent's CPU time (utime + stime of /proc/<pid>/stat) over BENCH_SECONDS, as a
 * percentage of one core. Target: under 1 % with 100 containers.
 *   BENCH_CONTAINERS (100), BENCH_SECONDS (60), BENCH_WARMUP_SECONDS (15), SKIFF_METRICS_INTERVAL_SECONDS (10)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { waitFor } from '@skiff/testing';
import { type ProcessStack, dockerCommand, startProcessStack } from '../apps/control-plane/src/testing/process-stack.js';

const N = Number(process.env.BENCH_CONTAINERS ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 15);
const INTERVAL = process.env.SKIFF_METRICS_INTERVAL_SECONDS ?? '10';
const run = randomBytes(3).toString('hex');
const prefix = `skiff-bench-${run}`;
const argvOf = (name: string) => process.env[name]?.split(' ').filter(Boolean);
const log = (text: string) => process.stderr.write(`bench agent-metrics: ${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds (user + system) the process has used: fields 14 and 15 of /proc/<pid>/stat, in clock ticks. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: field 3 is index 0, so utime (14) is index 11 and stime (15) index 12.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function startContainers(): Promise<void> {
  const names = Array.from({ length: N }, (_, i) => `${prefix}-${i}`);
  for (let i = 0; i < names.length; i += 8) {
    await Promise.all(
      names.slice(i, i + 8).map(async (name) => {
        const r = await dockerCommand(['run', '-d', '--name', name, '--label', 'skiff.managed=true', '--label', 'skiff.kind=application', '--label', `skiff.id=${prefix}`, 'busybox:latest', 'sleep', '86400']);
        if (!r.ok) throw new Error(`docker run ${name}: ${r.err}`);
      }),
    );
  }
}

async function removeContainers(): Promise<void> {
  const ids = (await dockerCommand(['ps', '-aq', '--filter', `label=skiff.id=${prefix}`])).out.split('\n').filter(Boolean);
  for (let i = 0; i < ids.length; i += 50) await dockerCommand(['rm', '-f', ...ids.slice(i, i + 50)]);
}

/** The agent's CPU over the measured window, in % of one core. */
async function measure(sampling: boolean): Promise<{ percent: number; samples: number }> {
  let stack: ProcessStack | undefined;
  try {
    stack = await startProcessStack({
      label: `bm-${run}-${sampling ? 'on' : 'off'}`,
      controlPlaneArgv: argvOf('SKIFF_BENCH_CONTROL_PLANE_CMD'),
      agentArgv: argvOf('SKIFF_BENCH_AGENT_CMD'),
      agentEnv: { SKIFF_METRICS_INTERVAL_SECONDS: sampling ? INTERVAL : '0' },
    });
    const pid = stack.agent.pid!;
    if (sampling) {
      // The streams are open and the first rounds stored before the window starts.
      const s = stack;
      await waitFor(async () => ((await s.ok('user.getServerMetrics', {})).points.length >= 2 ? true : null), { timeoutMs: 120_000, what: 'the first samples' });
    }
    await sleep(WARMUP * 1000);
    const before = cpuSeconds(pid);
    const started = process.hrtime.bigint();
    await sleep(SECONDS * 1000);
    const used = cpuSeconds(pid) - before;
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    const samples = sampling ? (await stack.ok('user.getServerMetrics', { dataPoints: '8640' })).points.length : 0;
    return { percent: (100 * used) / wall, samples };
  } finally {
    await stack?.close().catch((err: unknown) => log(`stopping the stack: ${String(err)}`));
  }
}

let cleaning: Promise<void> | null = null;
const cleanUp = () => (cleaning ??= removeContainers());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

try {
  log(`starting ${N} busybox containers labelled skiff.managed=true (${prefix}-*)`);
  await startContainers();
  log(`agent sampling every ${INTERVAL} s: ${WARMUP} s warm-up, then ${SECONDS} s measured`);
  const on = await measure(true);
  log('the same agent without sampling (the floor)');
  const off = await measure(false);
  const engine = (await dockerCommand(['version', '--format', '{{.Server.Version}}'])).out;
  console.log(`agent CPU, % of one core, ${N} Skiff containers, ${SECONDS} s (Docker Engine ${engine}):`);
  console.log(`  sampling every ${INTERVAL} s   ${on.percent.toFixed(2)} %   (${on.samples} host samples stored)`);
  console.log(`  no sampling (floor)       ${off.percent.toFixed(2)} %`);
  console.log(`  cost of sampling          ${(on.percent - off.percent).toFixed(2)} %   (target < 1 %)`);
} finally {
  await cleanUp();
}
