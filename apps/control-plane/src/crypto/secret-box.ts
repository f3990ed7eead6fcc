import { type KeyObject, createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';

const PREFIX = 'v1';
/** Opened secrets kept, and the longest sealed text kept: at most ~2 MB of text. */
const OPENED_ENTRIES = 1024;
const OPENED_MAX_SEALED = 1024;

/** AES-256-GCM encryption of secrets at rest: `v1:<iv>:<tag>:<ciphertext>`, base64url parts. */
export class SecretBox {
  /** A KeyObject, made once: given the bytes, each cipher would import the key again (5x the cost of opening a short secret). */
  private readonly key: KeyObject;
  /**
   * Short secrets sealed or opened recently, by their sealed text: a record read again (every
   * read of a project opens its env and its environments'), or answered as it was written, is
   * not decrypted again. A sealed text is only kept once made here or authenticated; a changed
   * one is a different text and is decrypted.
   */
  private readonly opened = new Map<string, string>();

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.key = createSecretKey(key);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    const sealed = [PREFIX, iv.toString('base64url'), tag.toString('base64url'), data.toString('base64url')].join(':');
    // The record made from it is usually answered at once (opened): known, not decrypted.
    this.keep(sealed, plain);
    return sealed;
  }

  open(sealed: string): string {
    const kept = this.opened.get(sealed);
    if (kept !== undefined) return kept;
    const plain = this.decrypt(sealed);
    this.keep(sealed, plain);
    return plain;
  }

  private keep(sealed: string, plain: string): void {
    if (sealed.length > OPENED_MAX_SEALED) return;
    if (this.opened.size >= OPENED_ENTRIES) this.opened.clear();
    this.opened.set(sealed, plain);
  }

  private decrypt(sealed: string): string {
    const [prefix, iv, tag, data] = sealed.split(':');
    if (prefix !== PREFIX || !iv || !tag || data === undefined) {
      throw new Error('not a sealed secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** The key from `SKIFF_SECRET_KEY` (64 hex chars or base64 of 32 bytes). */
export function parseSecretKey(text: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== 32) throw new Error('SKIFF_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}
