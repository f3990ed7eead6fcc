/**
 * A stream into one S3 object through multipart upload, in a fixed set of part buffers: the
 * stream's chunks are copied into a buffer of PART_BYTES, a full buffer is sent as a part, and
 * at most `queue` parts are in flight while the next one fills. The buffers are allocated once
 * per upload and reused, so what an upload holds is (queue + 1) × PART_BYTES whatever the size
 * of the object, no part-sized garbage is left for the collector (@aws-sdk/lib-storage
 * collects a part's chunks and concatenates them into a new buffer for every part), and the
 * buffers are freed as soon as the object is complete.
 * A body shorter than one part is sent with one PutObject.
 */
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type CompletedPart,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { BucketFailure } from './bucket-failure.js';

export interface MultipartOptions {
  partBytes: number;
  /** Parts sent while the next one fills; 0: the stream is read again only once each part is stored. */
  queue: number;
  signal: AbortSignal;
  /**
   * Makes a part buffer, which must own its whole ArrayBuffer (it is detached at the end): by
   * default an uninitialised one outside Node's pool. Tests watch the buffers here.
   */
  allocate?: (bytes: number) => Buffer;
  /** The endpoint's host, named with the bucket in a failed request's reason (bucket-failure.ts). */
  host?: string;
}

/** ES2024's ArrayBuffer.prototype.transfer (Node 21 and later), beyond the project's TypeScript lib. */
type Detachable = ArrayBuffer & { transfer(length: number): ArrayBuffer };

/** What an upload sent: its parts, 0 for a single PutObject. */
export interface UploadTally {
  parts: number;
}

export async function multipartUpload(s3: S3Client, target: { Bucket: string; Key: string }, body: Readable, options: MultipartOptions): Promise<UploadTally> {
  const { partBytes, queue, signal, allocate = Buffer.allocUnsafeSlow } = options;
  const where = `${target.Key} to bucket ${target.Bucket}${options.host ? ` at ${options.host}` : ''}`;
  /** Sends one request; its failure says which step of the upload failed, and where. */
  const send = async <T>(step: string, request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (err) {
      throw new BucketFailure(`${step} ${where}`, err);
    }
  };
  const abortable = { abortSignal: signal };
  const free: Buffer[] = [];
  const allocated: Buffer[] = [];
  /**
   * Once the object is complete, every request that read the buffers has been answered: detached,
   * their memory goes back at once rather than at the next full collection, which an idle agent
   * may not run for hours. (After a failure a request may still be writing: the collector frees them.)
   */
  const release = (tally: UploadTally) => {
    for (const buffer of allocated) (buffer.buffer as Detachable).transfer(0);
    return tally;
  };
  const take = () => {
    const reused = free.pop();
    if (reused) return reused;
    // Uninitialised is enough: every byte sent is written first.
    const buffer = allocate(partBytes);
    allocated.push(buffer);
    return buffer;
  };
  let part = take();
  let filled = 0;
  let uploadId: string | undefined;
  let partNumber = 0;
  const parts: CompletedPart[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;

  const sendPart = async (buffer: Buffer, length: number) => {
    if (!uploadId) uploadId = (await send('starting the upload of', () => s3.send(new CreateMultipartUploadCommand(target), abortable))).UploadId;
    // Backpressure: the stream is not read while `queue` parts are on their way.
    while (inFlight.size >= Math.max(queue, 1) && failure === undefined) await Promise.race(inFlight);
    if (failure !== undefined) throw failure;
    const PartNumber = ++partNumber;
    const sending = (async () => {
      const answer = await send(`uploading part ${PartNumber} of`, () =>
        s3.send(new UploadPartCommand({ ...target, UploadId: uploadId, PartNumber, Body: buffer.subarray(0, length) }), abortable),
      );
      parts.push({ PartNumber, ETag: answer.ETag });
      free.push(buffer);
    })();
    const tracked = sending.catch((err: unknown) => void (failure ??= err)).finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (queue === 0) {
      await tracked;
      if (failure !== undefined) throw failure;
    }
  };

  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < chunk.length) {
        const n = chunk.copy(part, filled, offset);
        filled += n;
        offset += n;
        if (filled === partBytes) {
          await sendPart(part, filled);
          part = take();
          filled = 0;
        }
      }
    }
    if (!uploadId) {
      await send('uploading', () => s3.send(new PutObjectCommand({ ...target, Body: part.subarray(0, filled) }), abortable));
      return release({ parts: 0 });
    }
    if (filled > 0) await sendPart(part, filled);
    await Promise.all(inFlight);
    if (failure !== undefined) throw failure;
    parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    await send('completing the upload of', () => s3.send(new CompleteMultipartUploadCommand({ ...target, UploadId: uploadId, MultipartUpload: { Parts: parts } }), abortable));
    return release({ parts: partNumber });
  } catch (err) {
    await Promise.allSettled(inFlight);
    // Parts of an unfinished upload would be billed and kept until the bucket's own lifecycle removes them.
    if (uploadId) await s3.send(new AbortMultipartUploadCommand({ ...target, UploadId: uploadId })).catch(() => undefined);
    throw err;
  }
}
