// Issue 17's "Done when", end to end with every part as a real process (control plane, NATS,
// the local agent sampling the host every second through its engine socket):
// - a memory threshold set below the current value produces exactly one message on a
//   subscribed webhook channel (an HTTP sink on loopback) over several sampling rounds, and
//   raising it above produces exactly one recovery message;
// - a followed runtime log (`GET /api/logs.service?follow=true`) ends within seconds of its
//   service being removed, its last event saying why.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerCommand, startProcessStack, type ProcessStack } from './testing/process-stack.js';
import { startHttpSink } from './testing/sinks.js';
import { SseReader } from './testing/sse-reader.js';

let s: ProcessStack;
let sink: Awaited<ReturnType<typeof startHttpSink>>;

beforeAll(async () => {
  sink = await startHttpSink();
  s = await startProcessStack({
    label: 'operations',
    agentEnv: { SKIFF_METRICS_INTERVAL_SECONDS: '1' },
    // Crossed at the first sample past the line: the test is about one message, not one per sample.
    controlPlaneEnv: { SKIFF_METRICS_ALERT_SECONDS: '0' },
  });
}, 180_000);
afterAll(async () => {
  await s?.close();
  await sink?.close();
});

type Point = { at: string; memoryPercent: number };
const points = async () => (await s.ok('user.getServerMetrics', { dataPoints: '100' })).points as Point[];

/** Waits until `rounds` more host samples are in the store than now. */
async function samplingRounds(rounds: number): Promise<void> {
  const newest = async () => (await points()).at(-1)?.at ?? '';
  const seen = new Set([await newest()]);
  await waitFor(
    async () => {
      seen.add(await newest());
      return seen.size > rounds;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: `${rounds} more sampling rounds` },
  );
}

describe('a threshold set low on purpose', () => {
  it('sends exactly one message to a subscribed webhook channel, and exactly one when it recovers', async () => {
    const path = `/threshold-${s.run}`;
    await s.ok('notification.createHook', {
      name: `threshold-${s.run}`,
      webhookUrl: `${sink.url}${path}`,
      channel: '#ops',
      serverThreshold: true,
      appDeploy: false,
      appBuildError: false,
      databaseBackup: false,
      platformBackup: false,
      volumeBackup: false,
      platformRestart: false,
      containerCleanup: false,
    });
    const messages = () => sink.requests.filter((r) => r.url === path).map((r) => String(r.json?.text ?? ''));
    const current = await waitFor(async () => (await points()).at(-1)?.memoryPercent ?? null, { timeoutMs: 30_000, what: 'a host sample' });
    const low = Math.max(0, Math.floor(current / 2));
    expect(low).toBeLessThan(current);

    await s.ok('settings.updateMetricsThresholds', { memoryPercent: low, cpuPercent: null });
    await waitFor(() => messages().length > 0, { timeoutMs: 30_000, what: 'the threshold message at the sink' });
    // Every one of these rounds is past the threshold: none may send another message.
    await samplingRounds(6);
    expect(messages(), 'one message for the crossing').toHaveLength(1);
    expect(messages()[0]).toMatch(new RegExp(`memory on the platform host crossed ${low} %`));

    await s.ok('settings.updateMetricsThresholds', { memoryPercent: 100, cpuPercent: null });
    await waitFor(() => messages().length > 1, { timeoutMs: 30_000, what: 'the recovery message at the sink' });
    await samplingRounds(6);
    expect(messages(), 'one message for the recovery').toHaveLength(2);
    expect(messages()[1]).toMatch(/memory on the platform host is back under 100 %/);
    expect(messages()[1]).not.toMatch(/crossed/);
  }, 120_000);
});

describe('a followed log', () => {
  it('ends within seconds of its service being removed, saying why', async () => {
    const app = await s.containerApplication('follow');
    await s.ok('application.update', {
      applicationId: app.applicationId,
      command: 'sh',
      args: ['-c', 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done'],
    });
    const queued = await s.ok('application.deploy', { applicationId: app.applicationId });
    expect((await s.deploymentEnd(app.applicationId, queued.deploymentId)).status).toBe('done');

    const res = await fetch(`${s.apiBase}/api/logs.service?applicationId=${app.applicationId}&tail=1&follow=true`, { headers: { 'x-api-key': s.key } });
    expect(res.status).toBe(200);
    const sse = new SseReader(res);
    await sse.until((r) => r.events.some((e) => e.event === 'line'), 'a followed line', 30_000);

    const removed = await dockerCommand(['service', 'rm', app.appName]);
    expect(removed.ok, removed.err).toBe(true);
    const removedAt = Date.now();
    await sse.until((r) => r.ended, 'the stream to end after the service went', 15_000);
    expect(Date.now() - removedAt).toBeLessThan(10_000);
    const last = sse.events.at(-1)!;
    expect(last.event).toBe('end');
    expect(JSON.parse(last.data!)).toEqual({ reason: `the service ${app.appName} was removed` });
  }, 240_000);
});
