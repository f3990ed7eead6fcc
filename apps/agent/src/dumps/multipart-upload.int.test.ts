// The agent's multipart upload (multipart-upload.ts) against an S3-compatible server in this
// process: objects of every shape (empty, under one part, whole parts, parts and a remainder)
// arrive byte for byte; a large object goes through queue + 1 part buffers reused (one when the
// stream waits for each part), never one per part, and freed (detached) when it ends; an upload whose stream fails midway fails with the stream's error and leaves no
// object (it also aborts the multipart upload, which s3rver does not implement: not checked here).
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartUpload } from './multipart-upload.js';
import { startTestS3, type TestS3 } from '../testing/test-s3.js';

const BUCKET = 'parts';
const PART = 5 * 1024 * 1024;
let server: TestS3;
let s3: S3Client;

beforeAll(async () => {
  server = await startTestS3(BUCKET);
  s3 = server.client;
});
afterAll(() => server?.stop());

/** `total` random bytes in chunks of `chunk` bytes (the last shorter), and their SHA-256. */
function source(total: number, chunk = 64 * 1024, failAt = Infinity) {
  const hash = createHash('sha256');
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= failAt) return this.destroy(new Error('the tool stopped'));
      if (sent >= total) return this.push(null);
      const bytes = randomBytes(Math.min(chunk, total - sent));
      sent += bytes.length;
      hash.update(bytes);
      this.push(bytes);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

const stored = async (key: string) =>
  createHash('sha256')
    .update(await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray())
    .digest('hex');

describe('multipartUpload', () => {
  it('stores objects of every size byte for byte, in parts of the part size', { timeout: 120_000 }, async () => {
    const cases = [
      { total: 0, parts: 0 },
      { total: 1000, parts: 0 },
      { total: PART, parts: 1 },
      // Chunks that straddle the part boundaries.
      { total: 3 * PART + 12_345, parts: 4, chunk: 100_003 },
    ];
    for (const { total, parts, chunk } of cases) {
      const key = `size-${total}`;
      for (const queue of [0, 2]) {
        const { stream, digest } = source(total, chunk);
        const tally = await multipartUpload(s3, { Bucket: BUCKET, Key: key }, stream, { partBytes: PART, queue, signal: new AbortController().signal });
        expect(tally.parts, key).toBe(parts);
        expect(await stored(key), key).toBe(digest());
      }
    }
  });

  it('sends a large object through queue + 1 part buffers, reused from part to part and freed at the end', { timeout: 120_000 }, async () => {
    for (const queue of [0, 1, 2]) {
      const { stream, digest } = source(12 * PART + 1);
      const buffers: Buffer[] = [];
      const allocate = (bytes: number) => {
        const buffer = Buffer.allocUnsafeSlow(bytes);
        buffers.push(buffer);
        return buffer;
      };
      const tally = await multipartUpload(s3, { Bucket: BUCKET, Key: `large-${queue}` }, stream, { partBytes: PART, queue, signal: new AbortController().signal, allocate });
      expect(tally.parts).toBe(13);
      expect(buffers).toHaveLength(queue + 1);
      // Detached: their memory went back when the upload ended, not at some later collection.
      expect(buffers.map((b) => b.buffer.byteLength)).toEqual(buffers.map(() => 0));
      expect(await stored(`large-${queue}`)).toBe(digest());
    }
  });

  it('fails with the stream’s error and stores nothing when the stream fails after parts were sent', { timeout: 120_000 }, async () => {
    for (const queue of [0, 2]) {
      const { stream } = source(10 * PART, 64 * 1024, 3 * PART);
      await expect(multipartUpload(s3, { Bucket: BUCKET, Key: `broken-${queue}` }, stream, { partBytes: PART, queue, signal: new AbortController().signal })).rejects.toThrow('the tool stopped');
      const objects = (await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `broken-${queue}` }))).Contents ?? [];
      expect(objects).toEqual([]);
    }
  });
});
