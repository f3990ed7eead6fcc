import { describe, expect, it } from 'vitest';
import { copyAppName } from './names.js';

describe('copyAppName', () => {
  it('replaces an earlier copy suffix instead of adding another', () => {
    expect(copyAppName('shop-web', 'aaaaaa')).toBe('shop-web-aaaaaa');
    expect(copyAppName('shop-web-aaaaaa', 'bbbbbb')).toBe('shop-web-bbbbbb');
  });
  it('stays within the 63 characters of an AppName', () => {
    const name = copyAppName('x'.repeat(63), 'cccccc');
    expect(name).toHaveLength(63);
    expect(name.endsWith('-cccccc')).toBe(true);
  });
  it('draws a fresh suffix each time', () => {
    expect(copyAppName('a')).toMatch(/^a-[0-9a-f]{6}$/);
    expect(copyAppName('a')).not.toBe(copyAppName('a'));
  });
});
