/**
 * The platform backup's archives encrypted with its destination's passphrase, in the age
 * format (scrypt recipient) that the agent writes for database and volume archives
 * (apps/agent/src/dumps/archive-crypto.ts): `age -d` decrypts them without Skiff. Streamed:
 * age seals 64 KiB chunks, so memory stays bounded whatever the size.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadable } from 'node:stream/web';
import { Encrypter } from 'age-encryption';

/** scrypt's cost (log2 N): the agent's, 32 MiB while a run derives its key. */
const SCRYPT_WORK_FACTOR = 15;

/** The bytes of `plain`, encrypted. */
export async function encrypted(plain: Readable, passphrase: string): Promise<Readable> {
  const e = new Encrypter();
  e.setPassphrase(passphrase);
  e.setScryptWorkFactor(SCRYPT_WORK_FACTOR);
  const out = await e.encrypt(Readable.toWeb(plain) as unknown as ReadableStream<Uint8Array>);
  return Readable.fromWeb(out as unknown as WebReadable<Uint8Array>);
}
