/**
 * Archives encrypted with a passphrase in the age format (age-encryption.org/v1, scrypt
 * recipient), streamed in 64 KiB chunks: `age -d` (or any age implementation) decrypts them
 * without Skiff. An encrypted object's key ends in ENCRYPTED_SUFFIX.
 */
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadable } from 'node:stream/web';
import { createGzip } from 'node:zlib';
import type { S3Object } from '@skiff/proto';
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

/** A tool's output through gzip (and age, when the object has a passphrase) into `body`, the upload's. */
export async function compressInto(output: Readable, body: Writable, object: S3Object, signal: AbortSignal): Promise<void> {
  if (!object.passphrase) return pipeline(output, createGzip(), body, { signal });
  const gzip = createGzip();
  const sealed = await encrypted(gzip, object.passphrase);
  await Promise.all([pipeline(output, gzip, { signal }), pipeline(sealed, body, { signal })]);
}

/** A downloaded object's gzip bytes: decrypted first when its key says it is encrypted. */
export async function gzipOf(source: Readable, object: S3Object): Promise<Readable> {
  if (!object.key.endsWith(ENCRYPTED_SUFFIX)) return source;
  if (!object.passphrase) {
    source.destroy();
    throw new Error('the file is encrypted (.age) and its destination has no passphrase');
  }
  return decrypted(source, object.passphrase);
}
