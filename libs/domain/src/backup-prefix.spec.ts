import { describe, expect, it } from 'vitest';
import { normalizeBackupPrefix } from './backup-prefix.js';

describe('normalizeBackupPrefix', () => {
  it('trims, drops leading slashes and ends with exactly one slash', () => {
    expect(normalizeBackupPrefix('nightly')).toBe('nightly/');
    expect(normalizeBackupPrefix('  nightly  ')).toBe('nightly/');
    expect(normalizeBackupPrefix('/nightly')).toBe('nightly/');
    expect(normalizeBackupPrefix('///nightly///')).toBe('nightly/');
    expect(normalizeBackupPrefix('a/b/')).toBe('a/b/');
  });

  it('collapses repeated slashes inside', () => {
    expect(normalizeBackupPrefix('a//b')).toBe('a/b/');
  });

  it('keeps an empty prefix empty', () => {
    expect(normalizeBackupPrefix('')).toBe('');
    expect(normalizeBackupPrefix('   ')).toBe('');
    expect(normalizeBackupPrefix('/')).toBe('');
    expect(normalizeBackupPrefix(' // ')).toBe('');
  });

  it('is idempotent', () => {
    for (const p of ['x', '/a//b/', '', ' c ']) {
      const once = normalizeBackupPrefix(p)!;
      expect(normalizeBackupPrefix(once)).toBe(once);
    }
  });

  it('refuses dot segments', () => {
    expect(normalizeBackupPrefix('../other')).toBeNull();
    expect(normalizeBackupPrefix('a/../../b')).toBeNull();
    expect(normalizeBackupPrefix('./a')).toBeNull();
    expect(normalizeBackupPrefix('a..b')).toBe('a..b/');
  });
});
