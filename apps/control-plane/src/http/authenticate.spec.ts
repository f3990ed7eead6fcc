import { describe, expect, it } from 'vitest';
import type { Principal } from '../authz/principal.js';
import { PrincipalCache, presentedKey } from './authenticate.js';

const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n] });

describe('presentedKey', () => {
  it('reads x-api-key or a Bearer authorization', () => {
    expect(presentedKey(headers({ 'x-api-key': 'k1' }))).toBe('k1');
    expect(presentedKey(headers({ authorization: 'Bearer k2' }))).toBe('k2');
    expect(presentedKey(headers({ authorization: 'bearer   k3 ' }))).toBe('k3');
    expect(presentedKey(headers({ authorization: 'Basic abc' }))).toBeNull();
    expect(presentedKey(headers({}))).toBeNull();
  });
});

describe('PrincipalCache', () => {
  it('asks once per key and interval, and again after clear or expiry', async () => {
    let now = 0;
    let calls = 0;
    const cache = new PrincipalCache(async () => (calls++, { userId: 'u' } as Principal), 1000, () => now);
    await cache.resolve('k');
    await cache.resolve('k');
    expect(calls).toBe(1);
    cache.clear();
    await cache.resolve('k');
    expect(calls).toBe(2);
    now = 2000;
    await cache.resolve('k');
    expect(calls).toBe(3);
  });

  it('does not keep an answer read before a clear, nor anything while caching is off', async () => {
    let calls = 0;
    let release: () => void = () => {};
    const cache = new PrincipalCache(async () => {
      calls++;
      if (calls === 1) await new Promise<void>((r) => (release = r));
      return { userId: 'u' } as Principal;
    });
    const stale = cache.resolve('k');
    await Promise.resolve();
    cache.clear();
    release();
    await stale;
    await cache.resolve('k');
    expect(calls).toBe(2);
    cache.setCaching(false);
    await cache.resolve('k');
    await cache.resolve('k');
    expect(calls).toBe(4);
    cache.setCaching(true);
    await cache.resolve('k');
    await cache.resolve('k');
    expect(calls).toBe(5);
  });
});
