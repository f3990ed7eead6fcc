/**
 * A dump read as fast as its source gives it, gzipped, into a bounded buffer that the upload
 * drains: the embedded database's dump holds PGlite's only session (pglite-thread.ts), so it must
 * not wait for the upload. Only when the upload falls `limit` gzipped bytes behind does the reading
 * wait for it, and requests with it. Gzip compresses a piece while the next is read.
 */
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** The gzipped bytes held for the upload at most (one piece besides). */
export const READ_AHEAD_BYTES = 32 * 1024 * 1024;

/** The pieces read and not yet taken by gzip, at most: a few, so that it works while the next is read. */
const PENDING = 4 * 1024 * 1024;

export interface ReadAhead {
  /** The gzipped dump. Destroying it stops the reading and ends the source (its `finally` runs). */
  output: Readable;
  /** Settles when the source is read to its end, or stopped; rejects with the source's failure. */
  done: Promise<void>;
}

export function readAhead(source: AsyncIterable<Uint8Array>, limit = READ_AHEAD_BYTES): ReadAhead {
  let wake: (() => void) | undefined;
  let stopped = false;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  const output = new Readable({
    highWaterMark: limit,
    read: nudge,
    destroy(err, callback) {
      stopped = true;
      nudge();
      callback(err);
    },
  });
  const gzip = createGzip();
  gzip.on('data', (chunk: Buffer) => {
    if (!stopped) output.push(chunk);
    nudge();
  });
  gzip.on('error', (err) => output.destroy(err));
  const room = () => new Promise<void>((resolve) => (wake = resolve));
  // Full: gzip's output the upload has not taken reaches the limit, or gzip is PENDING behind the reading.
  const pending = Math.min(PENDING, limit);
  const full = () => output.readableLength >= limit || gzip.writableLength >= pending;

  const done = (async () => {
    try {
      for await (const piece of source) {
        // Not waiting for gzip to take the piece: it compresses (in libuv's pool) while the next is read.
        gzip.write(piece);
        while (!stopped && full()) await room();
        // Leaving the loop ends the source: the dump's transaction and its hold on the session.
        if (stopped) break;
      }
      if (stopped) return;
      gzip.end();
      await finished(gzip);
      output.push(null);
    } catch (err) {
      const failure = err instanceof Error ? err : new Error(String(err));
      output.destroy(failure);
      throw failure;
    } finally {
      gzip.destroy();
    }
  })();
  // The failure reaches the reader through `output` too; `done` is for who waits on it.
  done.catch(() => undefined);
  return { output, done };
}
