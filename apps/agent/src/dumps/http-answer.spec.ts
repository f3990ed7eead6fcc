import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HttpAnswer, PIECE_BYTES } from './http-answer.js';

/** `pieces` through an HttpAnswer: its head, its body's pieces and text, whether it was complete. */
async function read(bytes: Buffer, pieces: Buffer[]) {
  const answer = new HttpAnswer();
  Readable.from(pieces).pipe(answer);
  const head = await answer.head;
  const body: Buffer[] = [];
  for await (const part of answer) body.push(part as Buffer);
  return { head, body, text: Buffer.concat(body).toString(), complete: answer.complete, total: bytes.length };
}
const cuts = (bytes: Buffer, at: number) => [bytes.subarray(0, at), bytes.subarray(at)];

const CHUNKED = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n' + '6\r\nBEGIN;\r\n' + '1a;x=y\r\nCREATE TABLE t(a);\nCOMMIT;\r\n' + '0\r\nx-trailer: 1\r\n\r\n',
);

describe('an HTTP/1.1 answer read off a stream', () => {
  it('decodes a chunked body whatever the chunk boundaries', async () => {
    for (let at = 1; at < CHUNKED.length; at++) {
      const pieces = cuts(CHUNKED, at);
      const { head, body, text, complete } = await read(CHUNKED, pieces);
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('text/plain');
      expect(text, `cut at ${at}`).toBe('BEGIN;CREATE TABLE t(a);\nCOMMIT;');
      expect(complete).toBe(true);
      expect(body).toHaveLength(1);
    }
  });

  it('passes a body of many small chunks on in few large pieces', async () => {
    const chunk = 'INSERT INTO t VALUES(1);\n'.repeat(20);
    const count = 2_000;
    const bytes = Buffer.from(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${`${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(count)}0\r\n\r\n`);
    const { text, body, complete } = await read(bytes, [...Array(Math.ceil(bytes.length / 700)).keys()].map((i) => bytes.subarray(i * 700, (i + 1) * 700)));
    expect(complete).toBe(true);
    expect(text).toBe(chunk.repeat(count));
    expect(body.length).toBeLessThanOrEqual(Math.ceil((chunk.length * count) / PIECE_BYTES));
    expect(body.slice(0, -1).every((part) => part.length >= PIECE_BYTES)).toBe(true);
  });

  it('reads a Content-Length body, and says a cut one is not complete', async () => {
    const whole = Buffer.from('HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nnope!');
    expect(await read(whole, cuts(whole, 20))).toMatchObject({ head: { status: 401 }, text: 'nope!', complete: true });
    const cut = CHUNKED.subarray(0, CHUNKED.length - 20);
    expect(await read(cut, [cut])).toMatchObject({ complete: false });
  });

  it('refuses what is not an HTTP answer, and a stream that ends before the head', async () => {
    await expect(read(Buffer.from('SSH-2.0\r\n\r\n'), [Buffer.from('SSH-2.0\r\n\r\n')])).rejects.toThrow('not HTTP/1.1');
    await expect(read(Buffer.from('HTTP/1.1 200'), [Buffer.from('HTTP/1.1 200')])).rejects.toThrow('before the answer’s head');
    const bad = Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n');
    await expect(read(bad, [bad]).then((r) => r.text)).rejects.toThrow('malformed');
  });
});
