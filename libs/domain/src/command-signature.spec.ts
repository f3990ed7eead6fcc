import { describe, expect, it } from 'vitest';
import { CommandSigner, CommandVerifier, KEY_ID_HEADER, SIGNATURE_HEADER, SIGNED_AT_HEADER, parseCommandKey } from './command-signature.js';

const payload = new TextEncoder().encode('a command');
const reader = (h: Record<string, string>) => (name: string) => h[name];

describe('command signatures', () => {
  const signer = CommandSigner.generate();
  const verifier = CommandVerifier.fromText(signer.publicKey);

  it('accepts what the pinned key signed for that subject', () => {
    const headers = signer.sign('agent.a.cmd', payload);
    expect(Object.keys(headers).sort()).toEqual([KEY_ID_HEADER, SIGNATURE_HEADER, SIGNED_AT_HEADER].sort());
    expect(verifier.check('agent.a.cmd', payload, reader(headers))).toBeNull();
  });

  it('refuses no signature, another key, another subject, another payload', () => {
    const headers = signer.sign('agent.a.cmd', payload);
    expect(verifier.check('agent.a.cmd', payload, reader({}))).toMatch(/unsigned/);
    expect(verifier.check('agent.a.cmd', payload, reader(CommandSigner.generate().sign('agent.a.cmd', payload)))).toMatch(/not the pinned key/);
    expect(verifier.check('agent.b.cmd', payload, reader(headers))).toMatch(/does not match/);
    expect(verifier.check('agent.a.ctl', payload, reader(headers))).toMatch(/does not match/);
    expect(verifier.check('agent.a.cmd', new TextEncoder().encode('a commanD'), reader(headers))).toMatch(/does not match/);
    // Another key presenting the pinned key's id still fails on the signature.
    const forged = { ...CommandSigner.generate().sign('agent.a.cmd', payload), [KEY_ID_HEADER]: verifier.keyId };
    expect(verifier.check('agent.a.cmd', payload, reader(forged))).toMatch(/does not match/);
    // The signing time is signed too.
    expect(verifier.check('agent.a.cmd', payload, reader({ ...headers, [SIGNED_AT_HEADER]: '2020-01-01T00:00:00.000Z' }))).toMatch(/does not match/);
  });

  it('refuses a signature older than maxAgeMs when asked to', () => {
    const headers = signer.sign('agent.a.ctl', payload, new Date('2030-01-01T00:00:00.000Z'));
    const check = (now: string) => verifier.check('agent.a.ctl', payload, reader(headers), { maxAgeMs: 60_000, now: new Date(now) });
    expect(check('2030-01-01T00:00:59.000Z')).toBeNull();
    expect(check('2030-01-01T00:01:01.000Z')).toMatch(/more than 60 s/);
    expect(check('2029-12-31T23:58:00.000Z')).toMatch(/more than 60 s/);
  });

  it('reads only Ed25519 public keys in base64 SPKI form', () => {
    expect(() => parseCommandKey('not base64!')).toThrow('not base64');
    expect(() => parseCommandKey('AAAA')).toThrow('not a public key');
    expect(parseCommandKey(` ${signer.publicKey}\n`).asymmetricKeyType).toBe('ed25519');
  });
});
