import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readAhead } from './read-ahead.js';

/** A dump source as the embedded database's is: it holds the session from its first piece until it ends. */
function source(pieces: Uint8Array[], fail?: Error) {
  const state = { holding: false, read: 0, ended: false };
  async function* gen() {
    state.holding = true;
    try {
      for (const p of pieces) {
        state.read++;
        yield p;
      }
      if (fail) throw fail;
    } finally {
      state.holding = false;
      state.ended = true;
    }
  }
  return { state, pieces: gen() };
}

async function readAll(output: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of output) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('the embedded dump read ahead of its upload', () => {
  it('reads the whole source while nothing drains the output, when its gzip fits the limit', async () => {
    // 4 MiB that gzip barely shrinks, far more than the streams' own buffers hold, within an 8 MiB limit.
    const pieces = Array.from({ length: 64 }, () => Buffer.from(randomBytes(48 * 1024).toString('base64')));
    const s = source(pieces);
    const { output, done } = readAhead(s.pieces, 8 * 1024 * 1024);
    // The upload has not read a byte: the session is let go all the same.
    await done;
    expect(s.state).toEqual({ holding: false, read: 64, ended: true });
    expect(gunzipSync(await readAll(output)).equals(Buffer.concat(pieces))).toBe(true);
  });

  it('waits for the upload once the limit is reached, then goes on as it drains', async () => {
    // Random bytes gzip to about their own size: 64 pieces of 64 KiB against a 256 KiB limit.
    const pieces = Array.from({ length: 64 }, () => randomBytes(64 * 1024));
    const s = source(pieces);
    const { output, done } = readAhead(s.pieces, 256 * 1024);
    await sleep(200);
    expect(s.state.holding).toBe(true);
    expect(s.state.read).toBeLessThan(16);
    expect(gunzipSync(await readAll(output)).equals(Buffer.concat(pieces))).toBe(true);
    await done;
    expect(s.state.ended).toBe(true);
  });

  it('ends the source when the upload stops early', async () => {
    const s = source(Array.from({ length: 64 }, () => randomBytes(64 * 1024)));
    const { output, done } = readAhead(s.pieces, 256 * 1024);
    output.on('error', () => undefined);
    await sleep(100);
    output.destroy(new Error('the upload failed'));
    await done;
    expect(s.state).toMatchObject({ holding: false, ended: true });
    expect(s.state.read).toBeLessThan(64);
  });

  it("passes the source's failure to the reader and to who waits for its end", async () => {
    const s = source([Buffer.from('CREATE TABLE t ();\n')], new Error('the cursor failed'));
    const { output, done } = readAhead(s.pieces);
    await expect(done).rejects.toThrow('the cursor failed');
    await expect(readAll(output)).rejects.toThrow('the cursor failed');
    expect(s.state.holding).toBe(false);
  });
});
