import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, parseSecretKey } from './secret-box.js';

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

describe('SecretBox', () => {
  const keyBytes = randomBytes(32);
  const box = new SecretBox(keyBytes);
  // A bare AES-256-GCM decryption of a short text, the work an open did every time.
  const key = createSecretKey(keyBytes);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update('A=1'), cipher.final()]);
  const tag = cipher.getAuthTag();

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
    expect(box.open(sealed)).toBe('A=1');
    const again = nsPerCall(5_000, () => box.open(sealed));
    const decrypt = nsPerCall(5_000, () => {
      const d = createDecipheriv('aes-256-gcm', key, iv);
      d.setAuthTag(tag);
      return Buffer.concat([d.update(data), d.final()]);
    });
    expect(again).toBeLessThan(decrypt / 4);
    const parts = sealed.split(':');
    parts[3] = Buffer.from('A=2').toString('base64url');
    expect(() => box.open(parts.join(':'))).toThrow();
    expect(box.open(sealed)).toBe('A=1');
  });

  it('opens a text it sealed without decrypting it (a record answered as it was written)', () => {
    // Each sealed text opened once: the fastest of three rounds, each with texts never opened.
    let fresh = Infinity;
    for (let round = 0; round < 3; round++) {
      const sealed = Array.from({ length: 300 }, (_, i) => box.seal(`A=${i}`));
      const t = process.hrtime.bigint();
      for (const s of sealed) box.open(s);
      fresh = Math.min(fresh, Number(process.hrtime.bigint() - t) / sealed.length);
      expect(box.open(sealed[299]!)).toBe('A=299');
    }
    const decrypt = nsPerCall(300, () => {
      const d = createDecipheriv('aes-256-gcm', key, iv);
      d.setAuthTag(tag);
      return Buffer.concat([d.update(data), d.final()]);
    });
    expect(fresh).toBeLessThan(decrypt / 4);
  });

  it('decrypts every time a sealed text too long to keep', () => {
    const long = box.seal('X'.repeat(2_000));
    expect(box.open(long)).toBe('X'.repeat(2_000));
    expect(box.open(long)).toBe('X'.repeat(2_000));
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
