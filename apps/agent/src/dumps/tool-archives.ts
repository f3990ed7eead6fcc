/**
 * A backup file between a tool in a container and the bucket: out, the tool's output through
 * gzip (and age) into a multipart upload (DumpDatabase, BackupVolume); back in, the object
 * opened (decrypted when it is an .age file) and through gunzip into the tool's standard
 * input (RestoreDatabase, RestoreVolume, VerifyDatabase).
 */
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { S3Object } from '@skiff/proto';
import { compressInto, gzipOf } from './archive-crypto.js';
import type { ToolRun } from './database-containers.js';
import { BucketFailure } from './bucket-failure.js';
import { downloadObject, removeObject, uploadObject } from './s3-object.js';

/**
 * The tool's output into the object until the tool exits: null when all ended well, else why
 * not (the failed request to the bucket, or the tool's exit), the partial object removed.
 * Rethrows when `signal` aborted the run.
 */
export async function archiveToolOutput(run: ToolRun, object: S3Object, signal: AbortSignal): Promise<string | null> {
  const body = new PassThrough();
  const storing = [compressInto(run.output, body, object, signal), uploadObject(object, body, signal)];
  const steps = [...storing, exitOrAbort(run, signal)];
  try {
    await Promise.all(steps);
    return null;
  } catch (err) {
    run.cancel();
    body.destroy();
    // A tool that fails after its output ended leaves an upload that may still complete (or
    // abort its parts): the object is removed once nothing can store it any more. Not the
    // tool's exit: a process that the closed connection does not end (one waiting on a lock)
    // would hold the command forever, its deadline and a cancel included.
    const settled = await Promise.allSettled(storing);
    await removeObject(object).catch(() => undefined);
    if (signal.aborted) throw err;
    // A failed request to the bucket is the cause whatever settled first: the upload leaving its
    // stream aborts the compression ("The operation was aborted") and the tool is killed.
    const bucket = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && s.reason instanceof BucketFailure);
    // Otherwise the first failure is the cause; the rest follow from it.
    return ((bucket?.reason ?? err) as Error).message;
  }
}

/** How long a failed feed waits for its tool's exit status. */
const TOOL_EXIT_WAIT_MS = 5_000;

/** The object's gzip bytes; throws with the reason a person reads (the download's, or the decryption's). */
export async function openArchive(object: S3Object): Promise<Readable> {
  return gzipOf(await downloadObject(object), object);
}

/** Why a feed failed; `download`: the bucket's side (the reason names the request), not the file's nor the tool's. */
export interface FeedFailure {
  reason: string;
  download: boolean;
}

/**
 * `source` through gunzip into the tool's input until the tool exits: null when both ended
 * well, else why not. Rethrows when `signal` aborted the run.
 */
export async function feedTool(run: ToolRun, source: Readable, signal: AbortSignal): Promise<FeedFailure | null> {
  run.output.resume();
  const exited = exitOrAbort(run, signal);
  try {
    await Promise.all([pipeline(source, createGunzip(), run.input!, { signal }), exited]);
    return null;
  } catch (err) {
    source.destroy();
    run.cancel();
    if (signal.aborted) throw err;
    // The download broke midway: the tool, its input cut, only says it was killed.
    if (err instanceof BucketFailure) return { reason: err.message, download: true };
    // A tool that stops reading makes the write fail first: its own exit says why.
    const tool = await Promise.race([exited.then(() => null, (e: Error) => e), new Promise<null>((r) => setTimeout(() => r(null), TOOL_EXIT_WAIT_MS))]);
    return { reason: (tool ?? (err as Error)).message, download: false };
  }
}

/**
 * The tool's exit, or `signal`'s abort, whichever comes first: docker exec's process outlives
 * its closed connection (a restore waiting on a lock once its input is read), and must not
 * hold a cancelled command, or one past its deadline.
 */
function exitOrAbort(run: ToolRun, signal: AbortSignal): Promise<void> {
  const exited = run.exited();
  return new Promise<void>((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    if (signal.aborted) aborted();
    else signal.addEventListener('abort', aborted, { once: true });
    exited.then(resolve, reject).finally(() => signal.removeEventListener('abort', aborted));
  });
}
