import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashToken, newApiKey } from './tokens.js';

describe('hashToken', () => {
  it("is the token's SHA-256 in hex, as stored keys were hashed", () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = newApiKey();
    expect(hashToken(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashToken('clé ✓')).toBe(createHash('sha256').update('clé ✓', 'utf8').digest('hex'));
  });
});
