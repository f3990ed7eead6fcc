import { describe, expect, it } from 'vitest';
import { appNameFrom, copyAppName } from './names.js';

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

describe('appNameFrom', () => {
  it('keeps letters and digits, joins the rest with hyphens, and adds a suffix', () => {
    expect(appNameFrom('Shop Frontend (EU)', 'abcdef')).toBe('shop-frontend-eu-abcdef');
  });
  it('falls back to "app" when nothing usable is left, and stays within 63 characters', () => {
    expect(appNameFrom('!!!', '000000')).toBe('app-000000');
    const long = appNameFrom('é'.repeat(100), '111111');
    expect(long).toMatch(/^e+-111111$/);
    expect(long.length).toBeLessThanOrEqual(63);
  });
});
