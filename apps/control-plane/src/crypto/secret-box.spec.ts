import { createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
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

  it('opens a short secret at about the cost of the cipher itself (the key is not imported again each time)', () => {
    const key = randomBytes(32);
    const keyed = new SecretBox(key);
    const sealed = keyed.seal('A=1');
    const prepared = createSecretKey(key);
    const cipherOnly = () => {
      const [, iv, tag, data] = sealed.split(':').map((p) => Buffer.from(p, 'base64url'));
      const d = createDecipheriv('aes-256-gcm', prepared, iv!);
      d.setAuthTag(tag!);
      return Buffer.concat([d.update(data!), d.final()]).toString('utf8');
    };
    // The fastest of a few rounds each: the least disturbed by other work on the machine.
    const fastest = (fn: () => string) => {
      let best = Infinity;
      for (let round = 0; round < 5; round++) {
        const started = performance.now();
        for (let i = 0; i < 2000; i++) fn();
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    expect(keyed.open(sealed)).toBe(cipherOnly());
    expect(fastest(() => keyed.open(sealed))).toBeLessThan(2 * fastest(cipherOnly));
  });

  it('parses keys given as hex or base64 and refuses other lengths', () => {
    const key = randomBytes(32);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(() => parseSecretKey('short')).toThrow();
  });
});
