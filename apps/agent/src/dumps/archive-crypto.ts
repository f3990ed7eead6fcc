/** A dump's or an archive's way to and from S3: gzip, and age when the destination has a passphrase (@skiff/archives/age). */
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { S3Object } from '@skiff/proto';
import { ENCRYPTED_SUFFIX, decrypted, encrypted } from '@skiff/archives/age';

export { ENCRYPTED_SUFFIX, decrypted, encrypted };

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
