import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ExecFrames } from './exec-frames.js';

const frame = (stream: 1 | 2, text: string) => {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

describe('the frames of a docker exec', () => {
  it('passes stdout on and keeps stderr, whatever the chunk boundaries', async () => {
    const all = Buffer.concat([frame(1, 'hello '), frame(2, 'warning: x\n'), frame(1, 'world'), frame(1, '')]);
    // Split every 3 bytes: headers and payloads cross chunks.
    const chunks: Buffer[] = [];
    for (let i = 0; i < all.length; i += 3) chunks.push(all.subarray(i, i + 3));
    const frames = new ExecFrames();
    const out: Buffer[] = [];
    for await (const part of Readable.from(chunks).pipe(frames)) out.push(part as Buffer);
    expect(Buffer.concat(out).toString()).toBe('hello world');
    expect(frames.stderrTail).toBe('warning: x');
  });
});
