/**
 * X.509 v3 certificates in DER, written by hand (Node's crypto signs and verifies but cannot
 * write a certificate): just what the agent channel's CA and its server certificate need,
 * ECDSA P-256 with SHA-256. Pure: keys come in, a PEM certificate goes out; Node's
 * X509Certificate reads the result back in the tests.
 */
import { type KeyObject, createHash, randomBytes, sign } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

const tlv = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const octets = (body: Buffer) => tlv(0x04, body);
const bits = (body: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), body]));
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const TRUE = Buffer.from([0x01, 0x01, 0xff]);
const explicit = (n: number, body: Buffer) => tlv(0xa0 + n, body);

/** A non-negative INTEGER from big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const body = bytes.subarray(i);
  return tlv(0x02, body[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const chunk = [n % 128];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | v % 128);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyId: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyId: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const name = (commonName: string) =>
  seq(set(seq(oid(OID.organization), utf8('Skiff'))), set(seq(oid(OID.commonName), utf8(commonName))));

const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [TRUE] : []), octets(value));

/** The key identifier of a public key: SHA-1 of its SubjectPublicKeyInfo (RFC 7093 allows any stable method). */
const keyId = (key: KeyObject) => createHash('sha1').update(key.export({ type: 'spki', format: 'der' })).digest();

/** The 4 or 16 bytes of an IP address. */
export function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new Error(`not an IP address: ${ip}`);
  let text = ip.toLowerCase();
  const last = text.slice(text.lastIndexOf(':') + 1);
  if (last.includes('.')) {
    const [a, b, c, d] = last.split('.').map(Number);
    text = text.slice(0, -last.length) + `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/** subjectAltName: IP addresses as iPAddress [7], everything else as dNSName [2]. */
const altNames = (names: readonly string[]) =>
  seq(...names.map((n) => (isIPv4(n) || isIPv6(n) ? tlv(0x87, ipBytes(n)) : tlv(0x82, Buffer.from(n, 'ascii')))));

export interface CertificateRequest {
  commonName: string;
  /** The certified public key. */
  publicKey: KeyObject;
  /** Who signs: the CA's key and name, or the subject itself (self-signed). */
  issuer: { commonName: string; privateKey: KeyObject; publicKey: KeyObject };
  notBefore: Date;
  notAfter: Date;
  /** A CA certificate (may sign certificates) or a TLS server's (with these host names and IP addresses). */
  kind: { ca: true } | { serverNames: readonly string[] };
}

/** A signed certificate, PEM. */
export function issueCertificate(r: CertificateRequest): string {
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const extensions =
    'ca' in r.kind
      ? [
          extension(OID.basicConstraints, true, seq(TRUE)),
          // keyCertSign, cRLSign, digitalSignature
          extension(OID.keyUsage, true, bits(Buffer.from([0x86]), 1)),
        ]
      : [
          extension(OID.basicConstraints, true, seq()),
          // digitalSignature (ECDSA keys sign the handshake)
          extension(OID.keyUsage, true, bits(Buffer.from([0x80]), 7)),
          extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
          extension(OID.subjectAltName, false, altNames(r.kind.serverNames)),
        ];
  extensions.push(
    extension(OID.subjectKeyId, false, octets(keyId(r.publicKey))),
    extension(OID.authorityKeyId, false, seq(tlv(0x80, keyId(r.issuer.publicKey)))),
  );
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name(r.issuer.commonName),
    seq(time(r.notBefore), time(r.notAfter)),
    name(r.commonName),
    r.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, { key: r.issuer.privateKey, dsaEncoding: 'der' });
  const der = seq(tbs, algorithm, bits(signature));
  const lines = der.toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
