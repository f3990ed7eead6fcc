/**
 * Archives encrypted with a passphrase in the age format (age-encryption.org/v1, scrypt
 * recipient), streamed in 64 KiB chunks: `age -d` (or any age implementation) decrypts them
 * without Skiff. The agent writes database and volume archives so, the control plane the
 * platform backup. An encrypted object's key ends in ENCRYPTED_SUFFIX.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadable } from 'node:stream/web';
import { Decrypter, Encrypter } from 'age-encryption';

export const ENCRYPTED_SUFFIX = '.age';

/**
 * scrypt's cost (log2 N): 2^15 × 1 KiB = 32 MiB while a run derives its key, so an agent
 * stays within its memory bound; the control plane accepts passphrases of 16 characters
 * or more only.
 */
const SCRYPT_WORK_FACTOR = 15;

/** The archive bytes of `plain`, encrypted. */
export async function encrypted(plain: Readable, passphrase: string): Promise<Readable> {
  const e = new Encrypter();
  e.setPassphrase(passphrase);
  e.setScryptWorkFactor(SCRYPT_WORK_FACTOR);
  const out = await e.encrypt(Readable.toWeb(plain) as unknown as ReadableStream<Uint8Array>);
  return Readable.fromWeb(out as unknown as WebReadable<Uint8Array>);
}

/** The plain bytes of an encrypted archive; rejects (before any byte) on a wrong passphrase. */
export async function decrypted(cipher: Readable, passphrase: string): Promise<Readable> {
  const d = new Decrypter();
  d.addPassphrase(passphrase);
  try {
    const out = await d.decrypt(Readable.toWeb(cipher) as unknown as ReadableStream<Uint8Array>);
    return Readable.fromWeb(out as unknown as WebReadable<Uint8Array>);
  } catch (err) {
    cipher.destroy();
    throw new Error(`the archive could not be decrypted (wrong passphrase, or not an age file): ${(err as Error).message}`);
  }
}
