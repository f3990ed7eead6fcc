import { describe, expect, it } from 'vitest';
import { reachableHost } from './reachable-host.js';

describe('reachableHost', () => {
  it('prints the loopback for a server listening on every address', () => {
    expect(reachableHost('0.0.0.0')).toBe('127.0.0.1');
    expect(reachableHost('::')).toBe('127.0.0.1');
  });

  it('keeps a specific address, bracketing IPv6', () => {
    expect(reachableHost('127.0.0.1')).toBe('127.0.0.1');
    expect(reachableHost('skiff.internal')).toBe('skiff.internal');
    expect(reachableHost('::1')).toBe('[::1]');
    expect(reachableHost('[::1]')).toBe('[::1]');
  });
});
