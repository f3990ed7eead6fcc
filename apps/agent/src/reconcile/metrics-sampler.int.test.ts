// The metrics sampler with the real Docker Engine and a real gRPC report server: a Skiff
// container (labelled skiff.managed=true, named with this run's id) gets one stats stream,
// its readings and the host's reach the server over ReportMetrics, and the stream closes
// when the container goes.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStatsStreams } from '../docker/stats-streams.js';
import { ReportClient } from '../reports/client.js';
import { type RecordingReportServer, startReportServer } from '../testing/report-server.js';
import { HostStats } from './host-stats.js';
import { MetricsSampler } from './metrics-sampler.js';

const run = randomBytes(3).toString('hex');
const name = `skiff-metrics-${run}`;
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const log = pino({ level: 'silent' });
let server: RecordingReportServer;
let reports: ReportClient;
let sampler: MetricsSampler;
let streams: EngineStatsStreams;
let opened = 0;
let diskPath: string | undefined;

beforeAll(async () => {
  server = await startReportServer();
  reports = new ReportClient({ target: server.target, credential: 'metrics-test', log });
  const real = new EngineStatsStreams('/var/run/docker.sock');
  // Counts the streaming calls: one per container, not one per round.
  streams = Object.assign(Object.create(real) as EngineStatsStreams, {
    open: (id: string, onLine: (l: Buffer) => void, onEnd: () => void) => {
      opened++;
      return real.open(id, onLine, onEnd);
    },
    listManaged: async () => (await real.listManaged()).filter((c) => c.name === name),
  });
  const container = await docker.createContainer({
    name,
    Image: 'busybox:latest',
    Cmd: ['sh', '-c', 'while true; do :; done'],
    Labels: { 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': `app_${run}` },
    HostConfig: { NanoCpus: 200_000_000 },
  });
  await container.start();
  sampler = new MetricsSampler({
    host: new HostStats({ diskPath: (diskPath = mkdtempSync(join(tmpdir(), 'skiff-metrics-'))) }),
    streams,
    send: (batch) => reports.sendMetrics(batch),
    intervalMs: 3_600_000,
    log,
  });
}, 60_000);

afterAll(async () => {
  await sampler?.stop();
  reports?.close();
  await server?.stop();
  await docker.getContainer(name).remove({ force: true }).catch(() => {});
  if (diskPath) rmSync(diskPath, { recursive: true, force: true });
});

describe('MetricsSampler', () => {
  it('sends the host and each Skiff container from one stats stream per container', async () => {
    await sampler.round();
    const batch = await waitFor(
      async () => {
        const b = await sampler.round();
        return b.containers.some((c) => c.containerName === name && c.cpuPercent > 0) ? b : null;
      },
      { timeoutMs: 30_000, intervalMs: 1_100, what: 'a reading of the busy container' },
    );
    const sample = batch.containers.find((c) => c.containerName === name)!;
    expect(sample).toMatchObject({ appName: name, workloadId: `app_${run}` });
    // Capped at 0.2 of a core.
    expect(sample.cpuPercent).toBeLessThan(40);
    expect(sample.memoryUsedBytes).toBeGreaterThan(0);
    expect(batch.hosts).toHaveLength(1);
    expect(batch.hosts[0]!.memoryTotalBytes).toBeGreaterThan(0);
    expect(batch.hosts[0]!.diskTotalBytes).toBeGreaterThan(0);
    // Delivered over the wire, with the agent's credential.
    expect(server.metrics.some((m) => m.containers.some((c) => c.containerName === name))).toBe(true);
    expect(server.authorizations).toContain('Bearer metrics-test');
    expect(opened).toBe(1);
  }, 60_000);

  it('reads the containers and their stats without loading dockerode (an idle agent samples by default)', async () => {
    // A process of its own: this file loads dockerode to make its container.
    const script = `
      const { createRequire } = await import('node:module');
      const { EngineStatsStreams } = await import(${JSON.stringify(fileURLToPath(new URL('../docker/stats-streams.ts', import.meta.url)))});
      const streams = new EngineStatsStreams('/var/run/docker.sock');
      const container = (await streams.listManaged()).find((c) => c.name === ${JSON.stringify(name)});
      const line = await new Promise((resolve) => {
        let close;
        streams.open(container.id, (l) => { close?.(); resolve(JSON.parse(String(l))); }, () => {}).then((c) => (close = c));
      });
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/node_modules/dockerode/'));
      console.log(JSON.stringify({ labels: container.labels, hasCpu: 'cpu_stats' in line, loaded }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ labels: expect.objectContaining({ 'skiff.id': `app_${run}` }), hasCpu: true, loaded: [] });
  }, 60_000);

  it('closes the stream when the container goes', async () => {
    await docker.getContainer(name).remove({ force: true });
    const batch = await sampler.round();
    expect(batch.containers.filter((c) => c.containerName === name)).toEqual([]);
    expect(opened).toBe(1);
  }, 30_000);
});
