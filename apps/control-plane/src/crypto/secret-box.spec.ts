import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { SecretBox, parseSecretKey } from './secret-box.js';

/** Decryptions started by the box (createDecipheriv calls). */
const decryptions = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    createDecipheriv: (...args: Parameters<typeof real.createDecipheriv>) => {
      decryptions.count++;
      return real.createDecipheriv(...args);
    },
  };
});
const decryptionsDuring = (f: () => void) => {
  const before = decryptions.count;
  f();
  return decryptions.count - before;
};

describe('SecretBox', () => {
  const keyBytes = randomBytes(32);
  const box = new SecretBox(keyBytes);

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

  it('opens a sealed text it opened before without decrypting it again; a changed one is still refused', () => {
    const sealed = box.seal('A=1');
    const other = new SecretBox(keyBytes);
    expect(decryptionsDuring(() => expect(other.open(sealed)).toBe('A=1'))).toBe(1);
    expect(decryptionsDuring(() => expect(other.open(sealed)).toBe('A=1'))).toBe(0);
    const parts = sealed.split(':');
    parts[3] = Buffer.from('A=2').toString('base64url');
    expect(() => other.open(parts.join(':'))).toThrow();
    expect(() => other.open(parts.join(':'))).toThrow();
    expect(other.open(sealed)).toBe('A=1');
  });

  it('opens a text it sealed without decrypting it (a record answered as it was written)', () => {
    const sealed = Array.from({ length: 300 }, (_, i) => box.seal(`A=${i}`));
    expect(decryptionsDuring(() => sealed.forEach((s, i) => expect(box.open(s)).toBe(`A=${i}`)))).toBe(0);
  });

  it('decrypts every time a sealed text too long to keep', () => {
    const long = box.seal('X'.repeat(2_000));
    expect(decryptionsDuring(() => expect(box.open(long)).toBe('X'.repeat(2_000)))).toBe(1);
    expect(decryptionsDuring(() => expect(box.open(long)).toBe('X'.repeat(2_000)))).toBe(1);
    const parts = long.split(':');
    parts[2] = Buffer.alloc(16).toString('base64url');
    expect(() => box.open(parts.join(':'))).toThrow();
  });

  it('parses keys given as hex or base64 and refuses other lengths', () => {
    const key = randomBytes(32);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(() => parseSecretKey('short')).toThrow();
  });
});
