import { describe, expect, it } from 'vitest';
import { ThresholdWatch, ThresholdWatches } from './thresholds.js';

const run = (watch: ThresholdWatch, threshold: number, samples: Array<[number, number]>) =>
  samples.map(([at, value]) => watch.observe(value, threshold, at)).filter((s) => s !== null);

describe('ThresholdWatch', () => {
  it('crosses once for a value that stays above, not once per sample', () => {
    const watch = new ThresholdWatch({ minDurationMs: 0, hysteresis: 5 });
    expect(run(watch, 80, [[0, 90], [10, 95], [20, 99], [30, 85]])).toEqual(['crossed']);
  });

  it('needs the minimum duration above the threshold before it crosses', () => {
    const watch = new ThresholdWatch({ minDurationMs: 30_000, hysteresis: 5 });
    // A spike shorter than the duration, then a value that stays.
    expect(run(watch, 80, [[0, 90], [10_000, 95], [20_000, 50], [30_000, 90], [50_000, 91]])).toEqual([]);
    expect(watch.observe(92, 80, 60_000)).toBe('crossed');
  });

  it('recovers once, only below the threshold less the hysteresis for the duration', () => {
    const watch = new ThresholdWatch({ minDurationMs: 20_000, hysteresis: 5 });
    expect(run(watch, 80, [[0, 90], [20_000, 90]])).toEqual(['crossed']);
    // Hovering just under the threshold (within the hysteresis) is still crossed.
    expect(run(watch, 80, [[30_000, 79], [40_000, 78], [50_000, 76], [70_000, 77]])).toEqual([]);
    expect(run(watch, 80, [[80_000, 70], [90_000, 60], [100_000, 65], [110_000, 50]])).toEqual(['recovered']);
    expect(watch.isCrossed).toBe(false);
  });

  it('alerts again after a recovery when the value crosses again', () => {
    const watch = new ThresholdWatch({ minDurationMs: 0, hysteresis: 5 });
    expect(run(watch, 50, [[0, 60], [1, 40], [2, 44], [3, 60], [4, 70]])).toEqual(['crossed', 'recovered', 'crossed']);
  });

  it('a threshold of 0 crosses at once and never recovers', () => {
    const watch = new ThresholdWatch({ minDurationMs: 0, hysteresis: 5 });
    expect(run(watch, 0, [[0, 0], [1, 3], [2, 0]])).toEqual(['crossed']);
  });
});

describe('ThresholdWatches', () => {
  it('keeps servers and kinds apart and forgets a removed threshold', () => {
    const watches = new ThresholdWatches({ minDurationMs: 0, hysteresis: 5 });
    expect(watches.observe('a', 'cpu', 90, 80, 0)).toMatchObject({ serverId: 'a', kind: 'cpu', state: 'crossed', value: 90, threshold: 80 });
    expect(watches.observe('a', 'memory', 90, 80, 0)?.state).toBe('crossed');
    expect(watches.observe('b', 'cpu', 90, 80, 0)?.state).toBe('crossed');
    expect(watches.observe('a', 'cpu', 95, 80, 1)).toBeNull();
    expect(watches.observe('a', 'cpu', 95, null, 2)).toBeNull();
    expect(watches.observe('a', 'cpu', 95, 80, 3)?.state).toBe('crossed');
    watches.forget('b');
    expect(watches.observe('b', 'cpu', 90, 80, 4)?.state).toBe('crossed');
  });
});
