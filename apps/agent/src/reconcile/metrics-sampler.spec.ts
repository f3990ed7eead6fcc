// The sampler's rhythm (metrics-sampler.ts), on fake timers: after each round the container
// streams rest, and wake WAKE_LEAD_MS before the next; with a short interval they never rest.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StatsStreams } from './container-stats.js';
import { MetricsSampler, WAKE_LEAD_MS } from './metrics-sampler.js';

const events: string[] = [];
const streams: StatsStreams = {
  listManaged: async () => [],
  open: async () => () => {},
  rest: async () => void events.push(`rest ${Date.now()}`),
  wake: async () => void events.push(`wake ${Date.now()}`),
};
const sampler = (intervalMs: number) =>
  new MetricsSampler({
    host: { read: async () => Promise.reject(new Error('no host here')) },
    streams,
    send: async () => void events.push(`round ${Date.now()}`),
    intervalMs,
    log: pino({ level: 'silent' }),
  });

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  events.length = 0;
});
afterEach(() => vi.useRealTimers());

describe('MetricsSampler', () => {
  it('rests the streams after each round and wakes them shortly before the next', async () => {
    const s = sampler(10_000);
    s.start();
    await vi.advanceTimersByTimeAsync(20_000);
    await s.stop();
    expect(events).toEqual(['round 10000', 'rest 10000', `wake ${20_000 - WAKE_LEAD_MS}`, 'round 20000', 'rest 20000']);
  });

  it('keeps reading with an interval too short to rest', async () => {
    const s = sampler(WAKE_LEAD_MS * 2);
    s.start();
    await vi.advanceTimersByTimeAsync(WAKE_LEAD_MS * 4);
    await s.stop();
    expect(events).toEqual([`round ${WAKE_LEAD_MS * 2}`, `round ${WAKE_LEAD_MS * 4}`]);
  });
});
