/**
 * Signed agent messages (issue 13): every command the control plane publishes and every
 * control request it sends carries an Ed25519 signature of the control plane's command key,
 * which each agent pins when it joins and checks before it acts.
 *
 * What is signed: `skiff-agent-message-v1`, the NATS subject, the signing time and the
 * payload, each on its own line (the payload last, as the exact bytes sent). The subject
 * names the server and the channel (`agent.<id>.cmd`, `agent.<id>.ctl`), so a message signed
 * for one server is refused by every other, and a command cannot pass for a control request;
 * the payload carries the command (its kind, its arguments) or the control request (which
 * request, and for what), so nothing in it can be changed or swapped.
 *
 * The signature travels in NATS headers: `Skiff-Sig` (base64), `Skiff-Key-Id` (which key
 * signed, so a key can be rotated later) and `Skiff-Signed-At` (ISO time, within the
 * signed bytes). A control request older than CONTROL_REQUEST_MAX_AGE_MS is refused (a
 * recorded one cannot be replayed later); a command is not, since it may wait in the stream
 * for an offline agent, and the agent's journal runs a command id once.
 *
 * The public key is written as base64 of its SPKI DER form (`SKIFF_COMMAND_KEY`).
 */
import { type KeyObject, createHash, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';

export const SIGNATURE_HEADER = 'Skiff-Sig';
export const KEY_ID_HEADER = 'Skiff-Key-Id';
export const SIGNED_AT_HEADER = 'Skiff-Signed-At';

/** How far a control request's signing time may be from the agent's clock (either way). */
export const CONTROL_REQUEST_MAX_AGE_MS = 5 * 60_000;

const CONTEXT = 'skiff-agent-message-v1';
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The bytes a signature covers. */
export function signedBytes(subject: string, signedAt: string, payload: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${CONTEXT}\n${subject}\n${signedAt}\n`, 'utf8'), payload]);
}

/** A short, stable name of a public key: the first 16 hex digits of the SHA-256 of its SPKI form. */
export function commandKeyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

/** The public key as `SKIFF_COMMAND_KEY` carries it: base64 of the SPKI DER form. */
export function encodeCommandKey(publicKey: KeyObject): string {
  return publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** Reads a `SKIFF_COMMAND_KEY` value; throws an Error saying what is wrong (never echoing the value). */
export function parseCommandKey(text: string): KeyObject {
  const value = text.trim();
  if (!BASE64.test(value)) throw new Error('not base64');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new Error('not a public key (base64 of its SPKI DER form)');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return key;
}

/** Signs what the control plane sends agents with its private command key. */
export class CommandSigner {
  readonly keyId: string;
  /** The public key, encoded as SKIFF_COMMAND_KEY carries it. */
  readonly publicKey: string;

  constructor(private readonly privateKey: KeyObject) {
    if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the command key must be an Ed25519 private key');
    const pub = createPublicKey(privateKey);
    this.keyId = commandKeyId(pub);
    this.publicKey = encodeCommandKey(pub);
  }

  /** A new key pair (tests, and the control plane's first boot). */
  static generate(): CommandSigner {
    return new CommandSigner(generateKeyPairSync('ed25519').privateKey);
  }

  /** The headers that sign `payload` for `subject` (to set on the NATS message). */
  sign(subject: string, payload: Uint8Array, now: Date = new Date()): Record<string, string> {
    const signedAt = now.toISOString();
    const signature = sign(null, signedBytes(subject, signedAt, payload), this.privateKey);
    return { [SIGNATURE_HEADER]: signature.toString('base64'), [KEY_ID_HEADER]: this.keyId, [SIGNED_AT_HEADER]: signedAt };
  }

  /** The private key in PKCS#8 PEM, to keep it on disk. */
  exportPrivateKey(): string {
    return this.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }
}

/** Reads a header of a received message (NATS MsgHdrs.get answers '' for a missing one). */
export type HeaderReader = (name: string) => string | undefined;

/** Checks messages against the pinned public key of the control plane. */
export class CommandVerifier {
  readonly keyId: string;

  constructor(private readonly publicKey: KeyObject) {
    this.keyId = commandKeyId(publicKey);
  }

  static fromText(text: string): CommandVerifier {
    return new CommandVerifier(parseCommandKey(text));
  }

  /**
   * Why the message must be refused, or null when the pinned key signed exactly this payload
   * for exactly this subject (and, with `maxAgeMs`, not longer ago than that from `now`).
   */
  check(subject: string, payload: Uint8Array, header: HeaderReader, options: { maxAgeMs?: number; now?: Date } = {}): string | null {
    const signature = header(SIGNATURE_HEADER) || '';
    const keyId = header(KEY_ID_HEADER) || '';
    const signedAt = header(SIGNED_AT_HEADER) || '';
    if (signature === '') return 'unsigned (no Skiff-Sig header)';
    if (keyId !== this.keyId) return `signed with key "${keyId.slice(0, 64)}", not the pinned key ${this.keyId}`;
    if (!ISO_TIME.test(signedAt)) return 'no valid Skiff-Signed-At header';
    if (!BASE64.test(signature)) return 'the signature is not base64';
    let valid: boolean;
    try {
      valid = verify(null, signedBytes(subject, signedAt, payload), this.publicKey, Buffer.from(signature, 'base64'));
    } catch {
      valid = false;
    }
    if (!valid) return 'the signature does not match the message (altered, or signed for another subject)';
    if (options.maxAgeMs !== undefined) {
      const age = (options.now ?? new Date()).getTime() - Date.parse(signedAt);
      if (Math.abs(age) > options.maxAgeMs) return `signed at ${signedAt}, more than ${Math.round(options.maxAgeMs / 1000)} s from this agent's clock`;
    }
    return null;
  }
}
