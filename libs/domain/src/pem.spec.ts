import { describe, expect, it } from 'vitest';
import { isPrivateKeyLabel, pemBlocks } from './pem.js';

describe('pemBlocks', () => {
  it('finds blocks in order, skipping text between them', () => {
    const text = 'Bag Attributes\n-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\nsubject=x\n-----BEGIN CERTIFICATE-----\nBBB\n-----END CERTIFICATE-----';
    expect(pemBlocks(text)).toEqual([
      { label: 'CERTIFICATE', text: '-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n' },
      { label: 'CERTIFICATE', text: '-----BEGIN CERTIFICATE-----\nBBB\n-----END CERTIFICATE-----\n' },
    ]);
  });
  it('ignores a block whose end does not match its beginning', () => {
    expect(pemBlocks('-----BEGIN CERTIFICATE-----\nAAA\n-----END PRIVATE KEY-----')).toEqual([]);
    expect(pemBlocks('not pem at all')).toEqual([]);
  });
  it('recognises private key labels', () => {
    for (const l of ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'OPENSSH PRIVATE KEY']) expect(isPrivateKeyLabel(l)).toBe(true);
    for (const l of ['CERTIFICATE', 'PUBLIC KEY']) expect(isPrivateKeyLabel(l)).toBe(false);
  });
});

describe('pemBlocks on hostile text', () => {
  it('is linear: many BEGINs without an END, and blocks around them, answer at once', async () => {
    const { pemBlocks: blocks } = await import('./pem.js');
    const started = performance.now();
    const junk = '-----BEGIN CERTIFICATE-----\n'.repeat(100_000);
    const found = blocks(`${junk}-----BEGIN A-----\nx\n-----END A-----\n${junk}`);
    expect(found.map((b) => b.label)).toEqual(['A']);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
