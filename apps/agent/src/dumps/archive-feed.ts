/**
 * A backup file on its way back in: the bucket object opened (decrypted when it is an .age
 * file), then through gunzip into a tool's standard input (RestoreDatabase, RestoreVolume,
 * VerifyDatabase).
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { S3Object } from '@skiff/proto';
import { gzipOf } from './archive-crypto.js';
import type { ToolRun } from './database-containers.js';
import { downloadObject, s3Reason } from './s3-object.js';

/** How long a failed feed waits for its tool's exit status. */
const TOOL_EXIT_WAIT_MS = 5_000;

/** The object's gzip bytes; throws with the reason a person reads (the download's, or the decryption's). */
export async function openArchive(object: S3Object): Promise<Readable> {
  let source: Readable;
  try {
    source = await downloadObject(object);
  } catch (err) {
    throw new Error(`the download failed: ${s3Reason(err)}`);
  }
  return gzipOf(source, object);
}

/**
 * `source` through gunzip into the tool's input until the tool exits: null when both ended
 * well, else why not. Rethrows when `signal` aborted the run.
 */
export async function feedTool(run: ToolRun, source: Readable, signal: AbortSignal): Promise<string | null> {
  run.output.resume();
  const exited = run.exited();
  try {
    await Promise.all([pipeline(source, createGunzip(), run.input!, { signal }), exited]);
    return null;
  } catch (err) {
    source.destroy();
    run.cancel();
    if (signal.aborted) throw err;
    // A tool that stops reading makes the write fail first: its own exit says why.
    const tool = await Promise.race([exited.then(() => null, (e: Error) => e), new Promise<null>((r) => setTimeout(() => r(null), TOOL_EXIT_WAIT_MS))]);
    return (tool ?? (err as Error)).message;
  }
}
