import { type JsonWebKey, type KeyObject, createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { trimChar } from './trim.js';

/**
 * SSH keys in the formats people paste and OpenSSH reads:
 * - public keys as an `authorized_keys` line (`ssh-ed25519 AAAA… comment`, RFC 4253 §6.6 blob),
 * - private keys as `-----BEGIN OPENSSH PRIVATE KEY-----` (OpenSSH's `openssh-key-v1`
 *   container, unencrypted) or as PEM (PKCS#8, PKCS#1, SEC1) read by node:crypto.
 * Supported key types: ed25519, RSA, ECDSA on P-256, P-384 and P-521.
 */

export type SshKeyType = 'ssh-ed25519' | 'ssh-rsa' | 'ecdsa-sha2-nistp256' | 'ecdsa-sha2-nistp384' | 'ecdsa-sha2-nistp521';

const CURVES = {
  'P-256': { ssh: 'nistp256', size: 32 },
  'P-384': { ssh: 'nistp384', size: 48 },
  'P-521': { ssh: 'nistp521', size: 66 },
} as const;
type Curve = keyof typeof CURVES;
const curveOfSsh = (name: string) => (Object.keys(CURVES) as Curve[]).find((c) => CURVES[c].ssh === name);

/** A key that could not be read, with the reason to show the user. */
export class SshKeyFormatError extends Error {}

const fail = (message: string): never => {
  throw new SshKeyFormatError(message);
};

// ---------------------------------------------------------------------------------------------
// SSH wire encoding (RFC 4251 §5)

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return Buffer.concat([uint32(bytes.length), bytes]);
}

/** An unsigned big-endian integer as an mpint: no leading zeros, one 0x00 when the high bit is set. */
function mpint(unsigned: Buffer): Buffer {
  let i = 0;
  while (i < unsigned.length && unsigned[i] === 0) i++;
  let bytes = unsigned.subarray(i);
  if (bytes.length > 0 && bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return sshString(bytes);
}

class Reader {
  private offset = 0;
  constructor(private readonly buf: Buffer) {}

  uint32(): number {
    if (this.offset + 4 > this.buf.length) fail('the key data ends too early');
    const n = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return n;
  }

  bytes(): Buffer {
    const length = this.uint32();
    if (this.offset + length > this.buf.length) fail('the key data ends too early');
    const out = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  text(): string {
    return this.bytes().toString('utf8');
  }

  /** An mpint as unsigned big-endian bytes (negative values are not valid in keys). */
  mpint(): Buffer {
    const b = this.bytes();
    if (b.length > 0 && b[0]! & 0x80) fail('a negative number in the key data');
    let i = 0;
    while (i < b.length && b[i] === 0) i++;
    return b.subarray(i);
  }

  get rest(): Buffer {
    return this.buf.subarray(this.offset);
  }
}

const b64u = (b: Buffer) => b.toString('base64url');
const fromB64u = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');
const leftPad = (b: Buffer, size: number) => (b.length >= size ? b : Buffer.concat([Buffer.alloc(size - b.length), b]));

// ---------------------------------------------------------------------------------------------
// Public keys

/** The public key blob of a JWK public key (or the public half of a private one). */
export function publicKeyBlob(jwk: JsonWebKey): Buffer {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    return Buffer.concat([sshString('ssh-ed25519'), sshString(fromB64u(jwk.x))]);
  }
  if (jwk.kty === 'RSA') {
    return Buffer.concat([sshString('ssh-rsa'), mpint(fromB64u(jwk.e)), mpint(fromB64u(jwk.n))]);
  }
  if (jwk.kty === 'EC' && jwk.crv && jwk.crv in CURVES) {
    const { ssh, size } = CURVES[jwk.crv as Curve];
    const point = Buffer.concat([Buffer.from([4]), leftPad(fromB64u(jwk.x), size), leftPad(fromB64u(jwk.y), size)]);
    return Buffer.concat([sshString(`ecdsa-sha2-${ssh}`), sshString(ssh), sshString(point)]);
  }
  return fail('unsupported key type (use ed25519, RSA or ECDSA on P-256, P-384 or P-521)');
}

/** The `authorized_keys` line of a JWK public key: `<type> <base64 blob>[ <comment>]`. */
export function encodeOpenSshPublicKey(jwk: JsonWebKey, comment = ''): string {
  const blob = publicKeyBlob(jwk);
  const type = new Reader(blob).text();
  return [type, blob.toString('base64'), comment.trim()].filter(Boolean).join(' ');
}

/** The `authorized_keys` line of a raw 32-byte ed25519 public key. */
export function ed25519OpenSshPublicKey(raw: Uint8Array, comment = ''): string {
  if (raw.length !== 32) fail('an ed25519 public key is 32 bytes');
  return encodeOpenSshPublicKey({ kty: 'OKP', crv: 'Ed25519', x: b64u(Buffer.from(raw)) }, comment);
}

/** Reads the public key fields that follow the type name in a blob (public or private section). */
function readPublicFields(r: Reader, type: string): JsonWebKey {
  if (type === 'ssh-ed25519') {
    const x = r.bytes();
    if (x.length !== 32) fail('an ed25519 public key is 32 bytes');
    return { kty: 'OKP', crv: 'Ed25519', x: b64u(x) };
  }
  if (type === 'ssh-rsa') {
    const e = r.mpint();
    const n = r.mpint();
    return { kty: 'RSA', e: b64u(e), n: b64u(n) };
  }
  const m = /^ecdsa-sha2-(nistp256|nistp384|nistp521)$/.exec(type);
  if (m) {
    const curve = curveOfSsh(r.text());
    if (!curve || CURVES[curve].ssh !== m[1]) fail('the ECDSA curve does not match the key type');
    const { size } = CURVES[curve!];
    const point = r.bytes();
    if (point.length !== 1 + 2 * size || point[0] !== 4) fail('the ECDSA point is not an uncompressed point of its curve');
    return { kty: 'EC', crv: curve, x: b64u(point.subarray(1, 1 + size)), y: b64u(point.subarray(1 + size)) };
  }
  return fail(`unsupported key type ${type} (use ed25519, RSA or ECDSA on P-256, P-384 or P-521)`);
}

export interface ParsedPublicKey {
  type: SshKeyType;
  jwk: JsonWebKey;
  comment: string;
}

/** Reads an `authorized_keys` line (options before the key type are not accepted). */
export function parseOpenSshPublicKey(line: string): ParsedPublicKey {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2) fail('expected "<type> <base64 key> [comment]"');
  const [type, data, ...comment] = parts as [string, string, ...string[]];
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) fail('the key is not base64');
  const r = new Reader(Buffer.from(data, 'base64'));
  const inner = r.text();
  if (inner !== type) fail(`the key data says ${inner}, the line says ${type}`);
  const jwk = readPublicFields(r, type);
  if (r.rest.length) fail('unexpected data after the key');
  return { type: type as SshKeyType, jwk, comment: comment.join(' ') };
}

/** The fingerprint OpenSSH shows (`ssh-keygen -l`): `SHA256:` and the unpadded base64 digest of the blob. */
export function sshFingerprint(line: string): string {
  const data = line.trim().split(/\s+/)[1] ?? '';
  const digest = createHash('sha256').update(Buffer.from(data, 'base64')).digest('base64');
  return `SHA256:${trimChar(digest, '=', 'end')}`;
}

// ---------------------------------------------------------------------------------------------
// OpenSSH private keys (openssh-key-v1, PROTOCOL.key in OpenSSH's sources)

const MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');
const BEGIN = '-----BEGIN OPENSSH PRIVATE KEY-----';
const END = '-----END OPENSSH PRIVATE KEY-----';

function armor(body: Buffer): string {
  const lines = body.toString('base64').match(/.{1,70}/g) ?? [];
  return `${BEGIN}\n${lines.join('\n')}\n${END}\n`;
}

export interface Ed25519PrivateKeyParts {
  /** The 32-byte private seed (the JWK `d`). */
  seed: Uint8Array;
  /** The 32-byte public key (the JWK `x`). */
  publicKey: Uint8Array;
  comment?: string;
  /** The check integer repeated at the start of the private section (random by default). */
  checkint?: number;
}

/** An unencrypted ed25519 private key in OpenSSH's own format, as `ssh-keygen -t ed25519 -N ''` writes it. */
export function encodeOpenSshEd25519PrivateKey(parts: Ed25519PrivateKeyParts): string {
  const seed = Buffer.from(parts.seed);
  const pub = Buffer.from(parts.publicKey);
  if (seed.length !== 32 || pub.length !== 32) fail('ed25519 seeds and public keys are 32 bytes');
  const checkint = parts.checkint ?? randomBytes(4).readUInt32BE();
  const publicBlob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
  let section = Buffer.concat([
    uint32(checkint),
    uint32(checkint),
    sshString('ssh-ed25519'),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString(parts.comment ?? ''),
  ]);
  const padding = (8 - (section.length % 8)) % 8;
  section = Buffer.concat([section, Buffer.from(Array.from({ length: padding }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    MAGIC,
    sshString('none'),
    sshString('none'),
    sshString(''),
    uint32(1),
    sshString(publicBlob),
    sshString(section),
  ]);
  return armor(body);
}

function bigOf(b: Buffer): bigint {
  return b.length ? BigInt(`0x${b.toString('hex')}`) : 0n;
}

function bytesOf(n: bigint): Buffer {
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Buffer.from(hex, 'hex');
}

export interface ParsedPrivateKey {
  type: SshKeyType;
  /** The private key as a JWK, ready for `createPrivateKey({ key, format: 'jwk' })`. */
  jwk: JsonWebKey;
  comment: string;
}

const OPENSSH_BEGIN = '-----BEGIN OPENSSH PRIVATE KEY-----';
const OPENSSH_END = '-----END OPENSSH PRIVATE KEY-----';

/** Reads an unencrypted `-----BEGIN OPENSSH PRIVATE KEY-----` block holding one key. */
export function parseOpenSshPrivateKey(text: string): ParsedPrivateKey {
  // indexOf, not a lazy `[\s\S]*?` between the markers: that retries from every BEGIN (quadratic).
  const begin = text.indexOf(OPENSSH_BEGIN);
  const end = begin < 0 ? -1 : text.indexOf(OPENSSH_END, begin + OPENSSH_BEGIN.length);
  if (end < 0) fail('not an OpenSSH private key');
  const body = Buffer.from(text.slice(begin + OPENSSH_BEGIN.length, end).replace(/\s+/g, ''), 'base64');
  if (!body.subarray(0, MAGIC.length).equals(MAGIC)) fail('not an openssh-key-v1 private key');
  const r = new Reader(body.subarray(MAGIC.length));
  const cipher = r.text();
  const kdf = r.text();
  r.bytes();
  if (cipher !== 'none' || kdf !== 'none') fail('the private key is protected by a passphrase; remove it first (ssh-keygen -p)');
  if (r.uint32() !== 1) fail('the file must hold exactly one key');
  const publicBlob = r.bytes();
  const s = new Reader(r.bytes());
  if (s.uint32() !== s.uint32()) fail('the private key is damaged (check integers differ)');
  const type = s.text();
  let jwk: JsonWebKey;
  if (type === 'ssh-ed25519') {
    const pub = readPublicFields(s, type);
    const both = s.bytes();
    if (both.length !== 64) fail('an ed25519 private key is 64 bytes');
    if (!both.subarray(32).equals(fromB64u(pub.x))) fail('the private key is damaged (its two public halves differ)');
    jwk = { ...pub, d: b64u(both.subarray(0, 32)) };
  } else if (type === 'ssh-rsa') {
    const n = s.mpint();
    const e = s.mpint();
    const d = s.mpint();
    const iqmp = s.mpint();
    const p = s.mpint();
    const q = s.mpint();
    const D = bigOf(d);
    jwk = {
      kty: 'RSA', n: b64u(n), e: b64u(e), d: b64u(d), p: b64u(p), q: b64u(q),
      dp: b64u(bytesOf(D % (bigOf(p) - 1n))),
      dq: b64u(bytesOf(D % (bigOf(q) - 1n))),
      qi: b64u(iqmp),
    };
  } else if (type.startsWith('ecdsa-sha2-')) {
    const pub = readPublicFields(s, type);
    const d = s.mpint();
    jwk = { ...pub, d: b64u(leftPad(d, CURVES[pub.crv as Curve].size)) };
  } else {
    return fail(`unsupported key type ${type} (use ed25519, RSA or ECDSA on P-256, P-384 or P-521)`);
  }
  const comment = s.text();
  if (!publicKeyBlob(jwk).equals(publicBlob)) fail('the private key is damaged (its public key does not match)');
  return { type: type as SshKeyType, jwk, comment };
}

// ---------------------------------------------------------------------------------------------
// A key pair as users give it

export interface SshKeyPair {
  /** The public key as an `authorized_keys` line (converted from PEM when given so). */
  publicKey: string;
  type: SshKeyType;
  fingerprint: string;
}

export type SshKeyPairResult = { ok: true; pair: SshKeyPair } | { ok: false; field: 'publicKey' | 'privateKey'; message: string };

function readPrivate(text: string): KeyObject {
  if (text.includes(BEGIN)) return createPrivateKey({ key: parseOpenSshPrivateKey(text).jwk, format: 'jwk' });
  try {
    return createPrivateKey(text);
  } catch (err) {
    if (/passphrase/i.test((err as Error).message) || /ENCRYPTED/.test(text)) {
      throw new SshKeyFormatError('the private key is protected by a passphrase; remove it first');
    }
    throw new SshKeyFormatError('not a private key in OpenSSH or PEM format');
  }
}

function readPublic(text: string): { key: KeyObject; comment: string } {
  const trimmed = text.trim();
  if (/^(ssh-|ecdsa-)/.test(trimmed)) {
    const parsed = parseOpenSshPublicKey(trimmed);
    return { key: createPublicKey({ key: parsed.jwk, format: 'jwk' }), comment: parsed.comment };
  }
  try {
    return { key: createPublicKey(trimmed), comment: '' };
  } catch {
    throw new SshKeyFormatError('not a public key in OpenSSH (authorized_keys) or PEM format');
  }
}

/**
 * Reads a key pair given by a user and checks that the public key is the private key's own.
 * Answers the public key as an `authorized_keys` line, its type and fingerprint, or the
 * field at fault with a reason.
 */
export function readSshKeyPair(publicKey: string, privateKey: string): SshKeyPairResult {
  let priv: KeyObject;
  try {
    priv = readPrivate(privateKey);
    publicKeyBlob(priv.export({ format: 'jwk' }));
  } catch (err) {
    return { ok: false, field: 'privateKey', message: messageOf(err) };
  }
  let pub: { key: KeyObject; comment: string };
  let line: string;
  try {
    pub = readPublic(publicKey);
    line = encodeOpenSshPublicKey(pub.key.export({ format: 'jwk' }), pub.comment);
  } catch (err) {
    return { ok: false, field: 'publicKey', message: messageOf(err) };
  }
  const derived = createPublicKey(priv).export({ type: 'spki', format: 'der' });
  if (!derived.equals(pub.key.export({ type: 'spki', format: 'der' }))) {
    return { ok: false, field: 'publicKey', message: 'does not match the private key' };
  }
  return { ok: true, pair: { publicKey: line, type: line.split(' ')[0] as SshKeyType, fingerprint: sshFingerprint(line) } };
}

const messageOf = (err: unknown) => (err instanceof SshKeyFormatError ? err.message : 'could not be read as a key');

export type SshPrivateKeyResult = { ok: true; key: SshKeyPair } | { ok: false; message: string };

/**
 * Reads a private key given alone (OpenSSH or PEM, unencrypted) and answers its public half
 * as an `authorized_keys` line (with the key's own comment when OpenSSH stored one), its type
 * and fingerprint; or why it could not be read.
 */
export function readSshPrivateKey(privateKey: string): SshPrivateKeyResult {
  try {
    const priv = readPrivate(privateKey);
    const comment = privateKey.includes(BEGIN) ? parseOpenSshPrivateKey(privateKey).comment : '';
    const line = encodeOpenSshPublicKey(createPublicKey(priv).export({ format: 'jwk' }), comment);
    return { ok: true, key: { publicKey: line, type: line.split(' ')[0] as SshKeyType, fingerprint: sshFingerprint(line) } };
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  }
}

/** A fresh ed25519 pair: the private key in OpenSSH's format, the public key as an `authorized_keys` line. */
export function generateEd25519SshKeyPair(comment = ''): SshKeyPair & { privateKey: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const seed = fromB64u(jwk.d);
  const pub = fromB64u(jwk.x);
  const line = ed25519OpenSshPublicKey(pub, comment);
  return {
    publicKey: line,
    privateKey: encodeOpenSshEd25519PrivateKey({ seed, publicKey: pub, comment }),
    type: 'ssh-ed25519',
    fingerprint: sshFingerprint(line),
  };
}
