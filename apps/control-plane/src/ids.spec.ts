import { describe, expect, it, vi } from 'vitest';
import { randomIdGenerator, randomIds } from './ids.js';

const draws = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    randomFillSync: (...args: Parameters<typeof real.randomFillSync>) => {
      draws.count++;
      return real.randomFillSync(...args);
    },
  };
});

describe('randomIds', () => {
  it('answers the prefix and 16 base-36 characters, never the same id twice (also across blocks)', () => {
    const ids = randomIdGenerator(64);
    const seen = new Set(Array.from({ length: 10_000 }, () => ids('prj')));
    expect(seen.size).toBe(10_000);
    for (const id of seen) expect(id).toMatch(/^prj_[0-9a-z]{16}$/);
    expect(randomIds('req')).toMatch(/^req_[0-9a-z]{16}$/);
  });

  it('draws its random bytes a block at a time: one draw serves 256 ids', () => {
    const ids = randomIdGenerator();
    const before = draws.count;
    for (let i = 0; i < 1024; i++) ids('req');
    expect(draws.count - before).toBe(4);
  });
});
