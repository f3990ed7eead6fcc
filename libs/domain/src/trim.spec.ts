import { describe, expect, it } from 'vitest';
import { trimChar } from './trim.js';

describe('trimChar', () => {
  it('removes the runs of one character at either end, or both', () => {
    expect(trimChar('--a-b--', '-')).toBe('a-b');
    expect(trimChar('--a-b--', '-', 'start')).toBe('a-b--');
    expect(trimChar('--a-b--', '-', 'end')).toBe('--a-b');
    expect(trimChar('----', '-')).toBe('');
    expect(trimChar('', '/')).toBe('');
  });

  it('is one pass on a long run', () => {
    const started = performance.now();
    expect(trimChar(`${'/'.repeat(5_000_000)}x`, '/', 'end')).toHaveLength(5_000_001);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
