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

  it('passes payloads on as slices of the chunks they came in, never copies', async () => {
    const all = Buffer.concat([frame(1, 'a'.repeat(1000)), frame(2, 'oops'), frame(1, 'b'.repeat(500))]);
    // Boundaries inside a header and inside payloads.
    const chunks = [all.subarray(0, 5), all.subarray(5, 600), all.subarray(600, 1013), all.subarray(1013)].map((c) => Buffer.from(c));
    const frames = new ExecFrames();
    const out: Buffer[] = [];
    // 'data' events hand on each pushed piece as it is (an async iterator's read() joins them).
    await new Promise((resolve) => Readable.from(chunks).pipe(frames).on('data', (part: Buffer) => out.push(part)).on('end', resolve));
    expect(Buffer.concat(out).toString()).toBe('a'.repeat(1000) + 'b'.repeat(500));
    const inside = (part: Buffer, c: Buffer) => part.buffer === c.buffer && part.byteOffset >= c.byteOffset && part.byteOffset + part.length <= c.byteOffset + c.length;
    expect(out.every((part) => chunks.some((c) => inside(part, c)))).toBe(true);
    expect(frames.stderrTail).toBe('oops');
  });
});
