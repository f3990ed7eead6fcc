import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { randomIdGenerator, randomIds } from './ids.js';

/** The fastest of three runs of `n` calls, in nanoseconds per call. */
function nsPerCall(n: number, f: () => unknown): number {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / n);
  }
  return best;
}

describe('randomIds', () => {
  it('answers the prefix and 16 base-36 characters, never the same id twice (also across blocks)', () => {
    const ids = randomIdGenerator(64);
    const seen = new Set(Array.from({ length: 10_000 }, () => ids('prj')));
    expect(seen.size).toBe(10_000);
    for (const id of seen) expect(id).toMatch(/^prj_[0-9a-z]{16}$/);
    expect(randomIds('req')).toMatch(/^req_[0-9a-z]{16}$/);
  });

  it('draws its random bytes a block at a time: an id costs under a third of one draw of 16 bytes', () => {
    const draw = nsPerCall(20_000, () => randomBytes(16));
    expect(nsPerCall(20_000, () => randomIds('req'))).toBeLessThan(draw / 3);
  });
});
