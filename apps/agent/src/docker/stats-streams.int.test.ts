// The container stats streams on the real engine (stats-streams.ts): one streaming call per
// container; resting, it reads nothing (the engine's lines wait in the socket); woken, it
// reads the waiting lines at once and hands on the newest, a fresh one. The container (named
// with this run's id) is removed at the end.
import { randomBytes } from 'node:crypto';
import Dockerode from 'dockerode';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStatsStreams } from './stats-streams.js';

const name = `skiff-stats-${randomBytes(3).toString('hex')}`;
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
let id: string;

beforeAll(async () => {
  const container = await docker.createContainer({ name, Image: 'busybox:latest', Cmd: ['sleep', '600'], Labels: { 'skiff.managed': 'true' } });
  await container.start();
  id = container.id;
}, 60_000);

afterAll(async () => {
  await docker.getContainer(name).remove({ force: true }).catch(() => {});
});

const readAt = (line: Buffer) => Date.parse((JSON.parse(line.toString()) as { read: string }).read);

describe('EngineStatsStreams', () => {
  it('reads nothing while resting, and the newest line at once when woken', async () => {
    const streams = new EngineStatsStreams('/var/run/docker.sock');
    const lines: Buffer[] = [];
    let ended = false;
    const close = await streams.open(id, (line) => lines.push(line), () => (ended = true));
    try {
      await waitFor(async () => (lines.length >= 2 ? true : null), { timeoutMs: 10_000, intervalMs: 100, what: 'two stats lines' });
      await streams.rest();
      const before = lines.length;
      // The engine writes a line a second: resting, none is read.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      expect(lines.length).toBe(before);
      const woken = Date.now();
      await streams.wake();
      await waitFor(async () => (lines.length > before ? true : null), { timeoutMs: 5_000, intervalMs: 20, what: 'the waiting lines' });
      // The newest of the waiting lines is passed on, not the oldest: the engine wrote it within about a second before the wake.
      expect(woken - readAt(lines.at(-1)!)).toBeLessThan(2_000);
      expect(ended).toBe(false);
    } finally {
      close();
    }
  }, 30_000);

  it('ends the stream when the container goes', async () => {
    const streams = new EngineStatsStreams('/var/run/docker.sock');
    let ended = false;
    await streams.open(id, () => {}, () => (ended = true));
    await docker.getContainer(name).remove({ force: true });
    await waitFor(async () => (ended ? true : null), { timeoutMs: 10_000, intervalMs: 100, what: 'the end of the stream' });
  }, 30_000);
});
