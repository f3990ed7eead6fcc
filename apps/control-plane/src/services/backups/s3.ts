/**
 * An S3-compatible bucket as backups use it: connected through the outbound address policy
 * (the endpoint's name is resolved once, every address checked, and the connection pinned to
 * them), with path-style addressing so S3-compatible servers on a bare host work.
 * The AWS SDK loads with the first bucket opened: an idle control plane does not hold it.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { type OutboundPolicy, OutboundRefused, type Resolver, resolveUrl } from '@skiff/outbound';

export interface BucketSettings {
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
}

export interface StoredObject {
  key: string;
  size: number;
  lastModified: string;
}

/** A step of talking to S3 failed; `code` is S3's error code (NoSuchBucket, AccessDenied…) when it answered one. */
export class BucketError extends Error {
  override name = 'BucketError';
  constructor(
    readonly step: string,
    readonly code: string,
    detail: string,
  ) {
    super(`${step} failed: ${code}${detail && detail !== code ? `: ${detail}` : ''}`);
  }
}

/** Part size and parts in flight of multipart uploads: memory stays near size × (queue + 1). */
export const UPLOAD_PART_BYTES = 5 * 1024 * 1024;
export const UPLOAD_QUEUE = 2;

/** Opens a bucket after checking where its endpoint resolves; refused endpoints throw OutboundRefused. */
export async function openBucket(settings: BucketSettings, policy: OutboundPolicy, resolver?: Resolver): Promise<Bucket> {
  const url = new URL(settings.endpoint);
  const pinned = await resolveUrl(url, policy, resolver);
  let next = 0;
  const lookup: LookupFunction = (_host, options, callback) => {
    const address = pinned.addresses[next++ % pinned.addresses.length]!;
    const family = address.includes(':') ? 6 : 4;
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const sdk = await import('@aws-sdk/client-s3');
  const agent = url.protocol === 'https:' ? new HttpsAgent({ lookup, keepAlive: true }) : new HttpAgent({ lookup, keepAlive: true });
  const client = new sdk.S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: true,
    credentials: { accessKeyId: settings.accessKey, secretAccessKey: settings.secretKey },
    requestHandler: url.protocol === 'https:' ? { httpsAgent: agent } : { httpAgent: agent },
    maxAttempts: 2,
  });
  return new Bucket(client, sdk, settings.bucket, () => agent.destroy());
}

/** S3's error code of a failed call, or the network error's. */
function codeOf(err: unknown): { code: string; detail: string } {
  if (err instanceof OutboundRefused) return { code: 'OutboundRefused', detail: err.message };
  const e = err as { name?: string; Code?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const code = e.Code ?? (e.name && e.name !== 'Error' ? e.name : undefined) ?? e.code ?? `HTTP ${e.$metadata?.httpStatusCode ?? '?'}`;
  return { code, detail: e.message ?? '' };
}

export async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof BucketError) throw err;
    const { code, detail } = codeOf(err);
    throw new BucketError(name, code, detail);
  }
}

type S3Sdk = typeof import('@aws-sdk/client-s3');

export class Bucket {
  constructor(
    private readonly client: S3Client,
    private readonly sdk: S3Sdk,
    readonly name: string,
    private readonly end: () => void,
  ) {}

  private closed = false;

  close(): void {
    this.closed = true;
    this.client.destroy();
    this.end();
  }

  /** Lists, writes and removes a probe object under `prefix`; throws BucketError naming the step that failed. */
  async probe(prefix: string): Promise<void> {
    const { ListObjectsV2Command, PutObjectCommand, DeleteObjectCommand } = this.sdk;
    await step('list', () => this.client.send(new ListObjectsV2Command({ Bucket: this.name, Prefix: prefix, MaxKeys: 1 })));
    const key = `${prefix}.skiff-probe-${Date.now().toString(36)}`;
    await step('put', () => this.client.send(new PutObjectCommand({ Bucket: this.name, Key: key, Body: 'skiff connection test\n' })));
    await step('delete', () => this.client.send(new DeleteObjectCommand({ Bucket: this.name, Key: key })));
  }

  /** Streams `body` to `key` in multipart parts: memory stays near UPLOAD_PART_BYTES × (UPLOAD_QUEUE + 1). */
  async upload(key: string, body: Readable, contentType = 'application/gzip'): Promise<void> {
    await step('upload', async () => {
      const { Upload } = await import('@aws-sdk/lib-storage');
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.name, Key: key, Body: body, ContentType: contentType },
        partSize: UPLOAD_PART_BYTES,
        queueSize: UPLOAD_QUEUE,
        leavePartsOnError: false,
      });
      await upload.done();
    });
  }

  /** Every object whose key starts with `prefix`, with size and time. */
  async list(prefix: string): Promise<StoredObject[]> {
    const { ListObjectsV2Command } = this.sdk;
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      if (this.closed) throw new BucketError('list', 'Closed', 'the bucket was closed');
      const page = await step('list', () => this.client.send(new ListObjectsV2Command({ Bucket: this.name, Prefix: prefix, ContinuationToken: token })));
      for (const o of page.Contents ?? []) {
        if (o.Key) found.push({ key: o.Key, size: o.Size ?? 0, lastModified: (o.LastModified ?? new Date(0)).toISOString() });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  async remove(keys: string[]): Promise<void> {
    const { DeleteObjectsCommand } = this.sdk;
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await step('delete', () => this.client.send(new DeleteObjectsCommand({ Bucket: this.name, Delete: { Objects: batch.map((Key) => ({ Key })) } })));
    }
  }
}
