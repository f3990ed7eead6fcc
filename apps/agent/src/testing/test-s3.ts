import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Object } from '@skiff/proto';
import S3rver from 's3rver';

/** s3rver's credentials: it checks the access key, not a signature. */
export const S3RVER_KEY = 'S3RVER';

export interface TestS3 {
  endpoint: string;
  port: number;
  /** An S3 client of the server, for what a test reads and writes itself. */
  client: S3Client;
  /** The command field naming `key` in `bucket` (the first bucket by default) of this server. */
  object(key: string, fields?: Partial<S3Object>): S3Object;
  /** The stored object's bytes. */
  read(key: string, bucket?: string): Promise<Buffer>;
  write(key: string, body: Buffer | string, bucket?: string): Promise<void>;
  /** Stops the server (a test may, to see a bucket's outage) and removes its directory; again, nothing more. */
  stop(): Promise<void>;
}

/** An S3-compatible server (s3rver) on a free port of 127.0.0.1 with `buckets`, in a directory of its own. */
export async function startTestS3(...buckets: [string, ...string[]]): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'skiff-agent-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory, silent: true, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY } });
  const [first] = buckets;
  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    port,
    client,
    object: (key, fields = {}) => ({ endpoint, region: 'us-east-1', bucket: first, key, accessKey: S3RVER_KEY, secretKey: S3RVER_KEY, passphrase: '', ...fields }),
    read: async (key, bucket = first) => Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray()),
    write: async (key, body, bucket = first) => {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    stop: () =>
      (stopped ??= (async () => {
        client.destroy();
        await server.close();
        await rm(directory, { recursive: true, force: true });
      })()),
  };
}
