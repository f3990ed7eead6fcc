import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ed25519OpenSshPublicKey,
  encodeOpenSshEd25519PrivateKey,
  encodeOpenSshPublicKey,
  generateEd25519SshKeyPair,
  parseOpenSshPrivateKey,
  parseOpenSshPublicKey,
  readSshKeyPair,
  readSshPrivateKey,
  sshFingerprint,
} from './ssh-keys.js';

// Throwaway keys written by ssh-keygen (OpenSSH 9), used only as test vectors.
const ED25519_PRIVATE = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACAKTFUt04ivV9h+/e7FLxiYogQXGWbyQyMRlPPXR1oR1QAAAJD5UTRt+VE0
bQAAAAtzc2gtZWQyNTUxOQAAACAKTFUt04ivV9h+/e7FLxiYogQXGWbyQyMRlPPXR1oR1Q
AAAEDsm/KCqGRa0Tl/DRNAqYu3YdxqAE1URDpm3C+qoHQEJgpMVS3TiK9X2H797sUvGJii
BBcZZvJDIxGU89dHWhHVAAAADWZpeHR1cmVAc2tpZmY=
-----END OPENSSH PRIVATE KEY-----
`;
const ED25519_PUBLIC = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIApMVS3TiK9X2H797sUvGJiiBBcZZvJDIxGU89dHWhHV fixture@skiff';
const ED25519_FINGERPRINT = 'SHA256:Szd05JaAk7XXsG5tu6aiL+1kQ1ovMmjXCRiqwYCo3YU';
const ED25519_CHECKINT = 0xf951346d;

const RSA_PRIVATE = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABFwAAAAdzc2gtcn
NhAAAAAwEAAQAAAQEAuAzA1pMnGd9SvUzzWtuesNbuosdZFSr7pQhr+Tg4fjFocZxU6tSM
9HnQGpswGpckGkccSJxpOQlbFaU8JlTu9XOhq2yLbAhgjVibeQs9gBm/J7Iwf0+r3AFzD1
5eyEjg6k0cmS+Vmvu1EC7H6kO3mU/p8qWOfmSUqLVaZcbofwon7CCmHlRg2yQYeB96Y2DM
bin3DEgNQXE1wh8XYGv6sFYpz0EA/Q9nbePUTu0GNDrTihyqsc1sDnYFkmf/XCfOCV3AmN
oiNAHOrVjzCI2dVxvAQphw2Re2sBzV1Q0cWi08r8vl2ttfO/+N2vPLsxyFIWSXulUD8E01
RuhPYnwe+QAAA8D7aZWX+2mVlwAAAAdzc2gtcnNhAAABAQC4DMDWkycZ31K9TPNa256w1u
6ix1kVKvulCGv5ODh+MWhxnFTq1Iz0edAamzAalyQaRxxInGk5CVsVpTwmVO71c6GrbIts
CGCNWJt5Cz2AGb8nsjB/T6vcAXMPXl7ISODqTRyZL5Wa+7UQLsfqQ7eZT+nypY5+ZJSotV
plxuh/CifsIKYeVGDbJBh4H3pjYMxuKfcMSA1BcTXCHxdga/qwVinPQQD9D2dt49RO7QY0
OtOKHKqxzWwOdgWSZ/9cJ84JXcCY2iI0Ac6tWPMIjZ1XG8BCmHDZF7awHNXVDRxaLTyvy+
Xa2187/43a88uzHIUhZJe6VQPwTTVG6E9ifB75AAAAAwEAAQAAAQAIGOzgWTez2F1y3VB/
mNX8gG2d/8NC6Sc1IDplNpIAYKVwX35k7oEHvdboChfYXk9E+11FMeHMk/AhSFRtzfgiww
7ufydgfhCGvMqU+BJL8Stgew3N1sWAN8LGKagQi770JVGyyPh+CcDyO1H+/oe0rmK5PYtt
XXjPi1sKIJwt/+3DJg9adLdLmrydyb6LTTXHLoeqFqvw2+t17EUdzR+GhuskT4ImZzMPKZ
+vYH/uTtJpP3f76W8KxHgaxDrl/LhYyr0br/yDsISMY6Qiw/XY4HhhXSAQ0eIwJ4sZu7TV
Dzrk4PJ0jhM8i8yBValrlyOLzWaexTq6s4l3AzUmZ6XZAAAAgQCWDrKrj2uowGGS+SnmFM
kjUJ8PahBI2/RexBbcwo45+oJ6EZfykNO/+vn/+l4lc8sPrgPjeAQValATiKnenPJc4//J
wRF/8mE1tmKTs5qkNgTEU3lW5HrJsQMv7B23cZ2T3+oqsMjpscyBZJCA1odbA/ALqFNDhI
7qFGNmMnwXEAAAAIEA+gnIaa0VhhHeLSzpdQRRcsUcbk7FNxBwbRGVtNvsHOk12MsO7w/Y
joEbTr7Dln73gcS4eCdDJxZ1sRdFF1s+vAexoJz0YIOr1dDy8aeWgPovAEhlR6dLFhqqpH
cKcVNqC7mi7akVJa6hTZHKYL53ZWx1VUOzPJSLDR7/kI7jwC8AAACBALxwLnZI/VpBMNPd
6bHRyyA15kZVIMFHkS5VhnOO5VHhyCbSmF60cuoeB06avZfTrerVB0bmCqDu7edIYVK0h2
9kx5krNkwbBjiWiVrWzjb70uPrvfRmuGm16Axv7sn5cGM0cVwX64iTbpzgvAaEIgioPi68
2HTLIbwzzlT3/GFXAAAACXJzYUBza2lmZgE=
-----END OPENSSH PRIVATE KEY-----
`;
const RSA_PUBLIC = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC4DMDWkycZ31K9TPNa256w1u6ix1kVKvulCGv5ODh+MWhxnFTq1Iz0edAamzAalyQaRxxInGk5CVsVpTwmVO71c6GrbItsCGCNWJt5Cz2AGb8nsjB/T6vcAXMPXl7ISODqTRyZL5Wa+7UQLsfqQ7eZT+nypY5+ZJSotVplxuh/CifsIKYeVGDbJBh4H3pjYMxuKfcMSA1BcTXCHxdga/qwVinPQQD9D2dt49RO7QY0OtOKHKqxzWwOdgWSZ/9cJ84JXcCY2iI0Ac6tWPMIjZ1XG8BCmHDZF7awHNXVDRxaLTyvy+Xa2187/43a88uzHIUhZJe6VQPwTTVG6E9ifB75 rsa@skiff';
const RSA_FINGERPRINT = 'SHA256:1kCAw+G5lyZgEDOgxFAApYMv7tUa9zrdqOiZPlsdKEM';

const EC_PRIVATE = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAaAAAABNlY2RzYS
1zaGEyLW5pc3RwMjU2AAAACG5pc3RwMjU2AAAAQQTYbPUO47aikAbPEhpq79GF/xsu1et0
9wctfnt0YtkYOoC4Ppv1Tqw/kdDD3OLVZls5Ak8QuVzIYdmcZmifXRMHAAAAqCL7614i++
teAAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNhs9Q7jtqKQBs8S
Gmrv0YX/Gy7V63T3By1+e3Ri2Rg6gLg+m/VOrD+R0MPc4tVmWzkCTxC5XMhh2ZxmaJ9dEw
cAAAAhAKA0E52xmGmYLRfRsFnEaYLSJkQjPWGc0yOk7Ntu+m5CAAAACGVjQHNraWZmAQID
BAUGBw==
-----END OPENSSH PRIVATE KEY-----
`;
const EC_PUBLIC = 'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNhs9Q7jtqKQBs8SGmrv0YX/Gy7V63T3By1+e3Ri2Rg6gLg+m/VOrD+R0MPc4tVmWzkCTxC5XMhh2ZxmaJ9dEwc= ec@skiff';
const EC_FINGERPRINT = 'SHA256:sRlaEUEtIj9i4/5+j/+UIMK/f7Y9H5mhEEFpL151wCQ';

// ed25519, protected by the passphrase "pass".
const ENCRYPTED_PRIVATE = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABBY0iJ5Yc
NEyBhwEafdPma8AAAAEAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIN6pU/mVk6fZ/FPp
cxgTWM7/+Ruv4TX619XcXtLpz8QRAAAAkKmRpNbU7PNm7GGowjKsGzVtKfo6LWAi12X4K8
3/s+MIaV6Yefx4jbshft+TPwjOjjCgwpdZTShRF6CnIOq5vcAhlZ5k3wq4jtkGrQ3AUy4e
H9nCNvopdhxaEc36SJWlS14uH1K+clA5/AQpqfACPNhF2MwKcUA2aHlIUyDixRH82JylDq
5+RbAmn7KwV1Q1OQ==
-----END OPENSSH PRIVATE KEY-----
`;

describe('OpenSSH public keys', () => {
  it('encodes an ed25519 key exactly as ssh-keygen writes it', () => {
    const { jwk } = parseOpenSshPublicKey(ED25519_PUBLIC);
    const raw = Buffer.from(jwk.x!, 'base64url');
    expect(ed25519OpenSshPublicKey(raw, 'fixture@skiff')).toBe(ED25519_PUBLIC);
    expect(ed25519OpenSshPublicKey(raw)).toBe(ED25519_PUBLIC.split(' ').slice(0, 2).join(' '));
  });

  it('reads and re-encodes RSA and ECDSA keys byte for byte', () => {
    for (const line of [RSA_PUBLIC, EC_PUBLIC, ED25519_PUBLIC]) {
      const parsed = parseOpenSshPublicKey(line);
      expect(encodeOpenSshPublicKey(parsed.jwk, parsed.comment)).toBe(line);
    }
    expect(parseOpenSshPublicKey(EC_PUBLIC)).toMatchObject({ type: 'ecdsa-sha2-nistp256', comment: 'ec@skiff', jwk: { kty: 'EC', crv: 'P-256' } });
    expect(parseOpenSshPublicKey(RSA_PUBLIC).jwk.e).toBe('AQAB');
  });

  it('computes the fingerprints ssh-keygen -l shows', () => {
    expect(sshFingerprint(ED25519_PUBLIC)).toBe(ED25519_FINGERPRINT);
    expect(sshFingerprint(RSA_PUBLIC)).toBe(RSA_FINGERPRINT);
    expect(sshFingerprint(EC_PUBLIC)).toBe(EC_FINGERPRINT);
  });

  it('refuses lines that are not keys, or whose type and data disagree', () => {
    const data = ED25519_PUBLIC.split(' ')[1];
    expect(() => parseOpenSshPublicKey('ssh-ed25519')).toThrow(/expected/);
    expect(() => parseOpenSshPublicKey('ssh-ed25519 !!!')).toThrow(/base64/);
    expect(() => parseOpenSshPublicKey(`ssh-rsa ${data}`)).toThrow(/says ssh-ed25519/);
    expect(() => parseOpenSshPublicKey(`ssh-ed25519 ${Buffer.from('short').toString('base64')}`)).toThrow();
    expect(() => parseOpenSshPublicKey(`ssh-dss ${Buffer.concat([Buffer.from([0, 0, 0, 7]), Buffer.from('ssh-dss')]).toString('base64')}`)).toThrow(/unsupported/);
  });
});

describe('OpenSSH private keys', () => {
  it('writes an ed25519 key exactly as ssh-keygen does', () => {
    const { jwk, comment } = parseOpenSshPrivateKey(ED25519_PRIVATE);
    const encoded = encodeOpenSshEd25519PrivateKey({
      seed: Buffer.from(jwk.d!, 'base64url'),
      publicKey: Buffer.from(jwk.x!, 'base64url'),
      comment,
      checkint: ED25519_CHECKINT,
    });
    expect(encoded).toBe(ED25519_PRIVATE);
  });

  it('reads ed25519, RSA and ECDSA keys into keys node:crypto accepts', () => {
    for (const [text, type] of [
      [ED25519_PRIVATE, 'ed25519'],
      [RSA_PRIVATE, 'rsa'],
      [EC_PRIVATE, 'ec'],
    ] as const) {
      const parsed = parseOpenSshPrivateKey(text);
      expect(createPrivateKey({ key: parsed.jwk, format: 'jwk' }).asymmetricKeyType).toBe(type);
    }
  });

  it('refuses keys protected by a passphrase, and damaged ones', () => {
    expect(() => parseOpenSshPrivateKey(ENCRYPTED_PRIVATE)).toThrow(/passphrase/);
    expect(() => parseOpenSshPrivateKey('-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----')).toThrow(/openssh-key-v1/);
    const lines = ED25519_PRIVATE.trim().split('\n');
    const body = Buffer.from(lines.slice(1, -1).join(''), 'base64');
    body[body.length - 40] ^= 0xff; // inside the private section: the public halves no longer agree
    const damaged = `${lines[0]}\n${body.toString('base64')}\n${lines.at(-1)}\n`;
    expect(() => parseOpenSshPrivateKey(damaged)).toThrow(/damaged/);
  });
});

describe('readSshKeyPair', () => {
  it('accepts matching pairs in OpenSSH format and answers the authorized_keys line', () => {
    for (const [pub, priv, fingerprint] of [
      [ED25519_PUBLIC, ED25519_PRIVATE, ED25519_FINGERPRINT],
      [RSA_PUBLIC, RSA_PRIVATE, RSA_FINGERPRINT],
      [EC_PUBLIC, EC_PRIVATE, EC_FINGERPRINT],
    ]) {
      const res = readSshKeyPair(`${pub}\n`, priv);
      expect(res).toEqual({ ok: true, pair: { publicKey: pub, type: pub.split(' ')[0], fingerprint } });
    }
  });

  it('accepts PEM keys and converts the public key to OpenSSH format', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const res = readSshKeyPair(
      publicKey.export({ type: 'spki', format: 'pem' }) as string,
      privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    );
    expect(res.ok).toBe(true);
    if (res.ok) {
      expect(res.pair.type).toBe('ecdsa-sha2-nistp384');
      expect(parseOpenSshPublicKey(res.pair.publicKey).jwk).toEqual(publicKey.export({ format: 'jwk' }));
    }
  });

  it('names the field at fault', () => {
    expect(readSshKeyPair(ED25519_PUBLIC, 'not a key')).toMatchObject({ ok: false, field: 'privateKey' });
    expect(readSshKeyPair(ED25519_PUBLIC, ENCRYPTED_PRIVATE)).toMatchObject({ ok: false, field: 'privateKey', message: expect.stringMatching(/passphrase/) });
    expect(readSshKeyPair('ssh-ed25519 nope', ED25519_PRIVATE)).toMatchObject({ ok: false, field: 'publicKey' });
    expect(readSshKeyPair(RSA_PUBLIC, ED25519_PRIVATE)).toEqual({ ok: false, field: 'publicKey', message: 'does not match the private key' });
    const { privateKey } = generateKeyPairSync('x25519');
    const x25519 = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(readSshKeyPair(ED25519_PUBLIC, x25519)).toMatchObject({ ok: false, field: 'privateKey', message: expect.stringMatching(/unsupported/) });
  });
});

describe('readSshPrivateKey', () => {
  it('derives the public key, type and fingerprint of an OpenSSH private key', () => {
    for (const [pub, priv, fingerprint] of [
      [ED25519_PUBLIC, ED25519_PRIVATE, ED25519_FINGERPRINT],
      [RSA_PUBLIC, RSA_PRIVATE, RSA_FINGERPRINT],
      [EC_PUBLIC, EC_PRIVATE, EC_FINGERPRINT],
    ]) {
      expect(readSshPrivateKey(priv)).toEqual({ ok: true, key: { publicKey: pub, type: pub.split(' ')[0], fingerprint } });
    }
  });

  it('reads PEM private keys (no comment)', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const res = readSshPrivateKey(privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
    expect(res.ok).toBe(true);
    if (res.ok) {
      expect(res.key.type).toBe('ssh-rsa');
      expect(res.key.publicKey.split(' ')).toHaveLength(2);
      expect(parseOpenSshPublicKey(res.key.publicKey).jwk).toEqual(publicKey.export({ format: 'jwk' }));
    }
  });

  it('says why a key cannot be used', () => {
    expect(readSshPrivateKey('not a key')).toEqual({ ok: false, message: 'not a private key in OpenSSH or PEM format' });
    expect(readSshPrivateKey(ENCRYPTED_PRIVATE)).toMatchObject({ ok: false, message: expect.stringMatching(/passphrase/) });
    expect(readSshPrivateKey(ED25519_PUBLIC)).toMatchObject({ ok: false });
    const x25519 = generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(readSshPrivateKey(x25519)).toMatchObject({ ok: false, message: expect.stringMatching(/unsupported/) });
  });
});

describe('generateEd25519SshKeyPair', () => {
  it('makes a pair that reads back as matching, in OpenSSH formats', () => {
    const pair = generateEd25519SshKeyPair('deploy@skiff');
    expect(pair.publicKey).toMatch(/^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/]+=* deploy@skiff$/);
    expect(pair.privateKey.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----\n')).toBe(true);
    const read = readSshKeyPair(pair.publicKey, pair.privateKey);
    expect(read).toEqual({ ok: true, pair: { publicKey: pair.publicKey, type: 'ssh-ed25519', fingerprint: pair.fingerprint } });
    expect(generateEd25519SshKeyPair().publicKey).not.toBe(pair.publicKey);
  });
});
