import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, parseSecretKey } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips text and never repeats a ciphertext', () => {
    const a = box.seal('DB_PASSWORD=hunter2');
    expect(a).not.toContain('hunter2');
    expect(box.open(a)).toBe('DB_PASSWORD=hunter2');
    expect(box.seal('DB_PASSWORD=hunter2')).not.toBe(a);
    expect(box.open(box.seal(''))).toBe('');
  });

  it('refuses tampered text and another key', () => {
    const sealed = box.seal('secret');
    const parts = sealed.split(':');
    parts[3] = Buffer.from('x').toString('base64url');
    expect(() => box.open(parts.join(':'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
    expect(() => box.open('plain text')).toThrow();
  });

  it('imports the key once, when made: the caller may wipe its bytes after (no per-cipher import)', () => {
    const key = randomBytes(32);
    const keyed = new SecretBox(key);
    const sealed = keyed.seal('A=1');
    key.fill(0);
    expect(keyed.open(sealed)).toBe('A=1');
    expect(keyed.open(keyed.seal('B=2'))).toBe('B=2');
  });

  it('parses keys given as hex or base64 and refuses other lengths', () => {
    const key = randomBytes(32);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(() => parseSecretKey('short')).toThrow();
  });
});
