/**
 * The bucket object a dump is written to or a restore read from, with the credentials the
 * command carried (never logged). Uploads are multipart with bounded parts in flight: the
 * memory of a dump stays near PART_BYTES × (QUEUE + 1) whatever its size.
 */
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Object } from '@skiff/proto';

export const PART_BYTES = 5 * 1024 * 1024;
export const QUEUE = 2;

function client(o: S3Object): S3Client {
  return new S3Client({
    endpoint: o.endpoint,
    region: o.region || 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: o.accessKey, secretAccessKey: o.secretKey },
  });
}

/** S3's error code (NoSuchBucket, AccessDenied…) and message; never the request. */
export function s3Reason(err: unknown): string {
  const e = err as { name?: string; Code?: string; message?: string };
  const code = e.Code ?? e.name ?? 'Error';
  return e.message && e.message !== code ? `${code}: ${e.message}` : code;
}

export async function uploadObject(o: S3Object, body: Readable, signal: AbortSignal): Promise<void> {
  const s3 = client(o);
  try {
    const upload = new Upload({ client: s3, params: { Bucket: o.bucket, Key: o.key, Body: body }, partSize: PART_BYTES, queueSize: QUEUE, leavePartsOnError: false });
    const abort = () => void upload.abort().catch(() => undefined);
    signal.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } finally {
      signal.removeEventListener('abort', abort);
    }
  } finally {
    s3.destroy();
  }
}

/** The object's content as a stream; the client closes when it ends. */
export async function downloadObject(o: S3Object): Promise<Readable> {
  const s3 = client(o);
  try {
    const answer = await s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: o.key }));
    const body = answer.Body as Readable;
    body.once('close', () => s3.destroy());
    return body;
  } catch (err) {
    s3.destroy();
    throw err;
  }
}

export async function removeObject(o: S3Object): Promise<void> {
  const s3 = client(o);
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: o.bucket, Key: o.key }));
  } finally {
    s3.destroy();
  }
}
