// Metrics end to end (issue 17, section 3): the control plane, NATS and the local agent as
// real processes on the embedded database. The agent samples every second and streams to
// the control plane over gRPC; user.getServerMetrics answers from the store, and a memory
// threshold of 0 % is crossed exactly once however many samples follow.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from './testing/process-stack.js';

let s: ProcessStack;

beforeAll(async () => {
  s = await startProcessStack({
    label: 'metrics',
    controlPlaneLogLevel: 'info',
    agentEnv: { SKIFF_METRICS_INTERVAL_SECONDS: '1' },
    controlPlaneEnv: { SKIFF_METRICS_ALERT_SECONDS: '0' },
  });
}, 180_000);
afterAll(async () => {
  await s?.close();
});

const points = async () => (await s.ok('user.getServerMetrics', { dataPoints: '100' })).points as Array<{ at: string; memoryPercent: number; diskTotalBytes: number }>;
const thresholdLines = (since = 0) => s.controlPlane.output(since).split('\n').filter((l) => l.includes('"msg":"server threshold"'));

describe('metrics from the local agent', () => {
  it("answers the platform host's samples within seconds of the start", async () => {
    const got = await waitFor(async () => ((await points()).length >= 2 ? points() : null), { timeoutMs: 30_000, what: 'host samples in the store' });
    expect(got.at(-1)!.memoryPercent).toBeGreaterThan(0);
    expect(got.at(-1)!.diskTotalBytes).toBeGreaterThan(0);
  }, 60_000);

  it('a threshold set at 0 % is crossed once, not once per sample', async () => {
    const mark = s.controlPlane.mark();
    expect(await s.ok('settings.updateMetricsThresholds', { memoryPercent: 0 })).toMatchObject({ serverId: 'local', memoryPercent: 0 });
    await waitFor(async () => thresholdLines(mark).length > 0, { timeoutMs: 20_000, what: 'the crossing' });
    const seen = (await points()).length;
    // Several more samples past the threshold.
    await waitFor(async () => (await points()).length >= Math.min(100, seen + 4), { timeoutMs: 20_000, what: 'more samples' });
    const lines = thresholdLines(mark);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ serverId: 'local', kind: 'memory', threshold: 0, state: 'crossed' });
  }, 60_000);
});
