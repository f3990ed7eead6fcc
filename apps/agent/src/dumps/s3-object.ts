/**
 * The bucket object a dump is written to or a restore read from, with the credentials the
 * command carried (never logged). Uploads are multipart (multipart-upload.ts) through
 * QUEUE + 1 part buffers: what a dump adds to the agent's memory stays near
 * PART_BYTES × (QUEUE + 1) whatever its size.
 */
import { createRequire } from 'node:module';
import type { LookupFunction } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type OutboundPolicy, type Resolver, resolveUrl } from '@skiff/outbound';
import type { S3Object } from '@skiff/proto';
import { BUCKET_CONNECT_TIMEOUT_MS, BUCKET_IDLE_TIMEOUT_MS, BucketFailure, bucketAt } from './bucket-failure.js';
import { multipartUpload } from './multipart-upload.js';

// Not `import … from 'node:http(s)'`: the agent's one-file ESM bundle hoists such imports to its
// top, and the ESM namespace of node:http reads its lazy getters, loading undici (~4 MB) into
// every idle agent (lazy-load.spec.ts).
const builtin = createRequire(import.meta.url);
const { Agent: HttpAgent } = builtin('node:http') as typeof import('node:http');
const { Agent: HttpsAgent } = builtin('node:https') as typeof import('node:https');

/** S3's smallest part (but the last). */
export const PART_BYTES = 5 * 1024 * 1024;
/**
 * Parts uploading while the next fills: none, the tool's output is read again once each part is
 * stored, so an upload holds one part buffer. One in flight held a second buffer, ~4 MB more at
 * the agent's peak during a backup (`tools/bench backup`), for no measurable gain on this host's
 * S3 server (two in flight: ~5 MB more again); over a link slower than the tool the upload
 * is the bottleneck either way (only the local S3 server was measured).
 */
export const QUEUE = 0;

/**
 * The control plane checked the endpoint under the operator's setting before it queued the
 * command; the agent, on another network and resolving the name again, refuses what no
 * setting allows (link-local, cloud metadata, reserved), so a name that now resolves to this
 * host's metadata service never receives the request.
 */
const AGENT_S3_POLICY: OutboundPolicy = { allowPrivate: true };

/** A client whose connections go only to the addresses the endpoint resolved to and the policy passed. */
async function client(o: S3Object, resolver?: Resolver): Promise<S3Client> {
  const url = new URL(o.endpoint);
  const { addresses } = await resolveUrl(url, AGENT_S3_POLICY, resolver);
  let next = 0;
  const lookup: LookupFunction = (_host, options, callback) => {
    const address = addresses[next++ % addresses.length]!;
    const family = address.includes(':') ? 6 : 4;
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const https = url.protocol === 'https:';
  const agent = https ? new HttpsAgent({ lookup, keepAlive: true }) : new HttpAgent({ lookup, keepAlive: true });
  return new S3Client({
    endpoint: o.endpoint,
    region: o.region || 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: o.accessKey, secretAccessKey: o.secretKey },
    // A bucket that stops answering fails the request with a timeout rather than at the command's deadline.
    requestHandler: { ...(https ? { httpsAgent: agent } : { httpAgent: agent }), connectionTimeout: BUCKET_CONNECT_TIMEOUT_MS, socketTimeout: BUCKET_IDLE_TIMEOUT_MS },
  });
}

export async function uploadObject(o: S3Object, body: Readable, signal: AbortSignal, resolver?: Resolver): Promise<void> {
  const s3 = await client(o, resolver);
  try {
    await multipartUpload(s3, { Bucket: o.bucket, Key: o.key }, body, { partBytes: PART_BYTES, queue: QUEUE, signal, host: new URL(o.endpoint).host });
  } finally {
    s3.destroy();
  }
}

/**
 * The object's content as a stream; the client closes when it ends. A failure, at the request
 * or midway through the content, is a BucketFailure saying so.
 */
export async function downloadObject(o: S3Object, resolver?: Resolver): Promise<Readable> {
  const s3 = await client(o, resolver);
  const step = `downloading ${o.key} from ${bucketAt(o.bucket, o.endpoint)}`;
  let body: Readable;
  try {
    body = (await s3.send(new GetObjectCommand({ Bucket: o.bucket, Key: o.key }))).Body as Readable;
  } catch (err) {
    s3.destroy();
    throw new BucketFailure(step, err);
  }
  const content = new PassThrough();
  body.once('error', (err) => content.destroy(new BucketFailure(step, err)));
  content.once('close', () => {
    body.destroy();
    s3.destroy();
  });
  return body.pipe(content);
}

export async function removeObject(o: S3Object, resolver?: Resolver): Promise<void> {
  const s3 = await client(o, resolver);
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: o.bucket, Key: o.key }));
  } finally {
    s3.destroy();
  }
}
