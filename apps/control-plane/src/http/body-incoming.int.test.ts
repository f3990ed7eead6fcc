import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIncomingText } from './body.js';

/** readIncomingText over a real socket: what the server answers, and whether the rest of the body was read. */
let server: Server;
let port: number;
const LIMIT = 1024;
/** The request as it was when answered. */
let atAnswer: { didRead: boolean; paused: boolean; ended: boolean } | undefined;
const seen = (req: IncomingMessage) => (atAnswer = { didRead: req.readableDidRead, paused: req.isPaused(), ended: req.readableEnded });

beforeAll(async () => {
  server = createServer((req, res) => {
    readIncomingText(req, LIMIT).then(
      (text) => res.end(JSON.stringify({ ok: text })),
      (err: Error) => (seen(req), res.setHeader('connection', 'close').end(JSON.stringify({ error: err.message }))),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

function post(headers: Record<string, string>, chunks: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d)).on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('readIncomingText', () => {
  it('reads a body with a declared length, and a chunked one', async () => {
    expect(await post({ 'content-length': '11' }, ['{"name":"x"'])).toEqual({ ok: '{"name":"x"' });
    expect(await post({ 'transfer-encoding': 'chunked' }, ['{"a":', '"é"}'])).toEqual({ ok: '{"a":"é"}' });
    expect(await post({ 'content-length': '0' }, [])).toEqual({ ok: '' });
  });

  it('refuses a declared length over the limit before reading anything', async () => {
    const answer = await post({ 'content-length': String(LIMIT + 1) }, ['x'.repeat(LIMIT + 1)]);
    expect(answer.error).toBe(`The request body is larger than ${LIMIT} bytes`);
    expect(atAnswer!.didRead).toBe(false);
  });

  it('refuses a chunked body at the chunk that crosses the limit and reads no further', async () => {
    const answer = await post({ 'transfer-encoding': 'chunked' }, ['x'.repeat(LIMIT - 10), 'y'.repeat(20), 'z'.repeat(64 * 1024)]);
    expect(answer.error).toBe(`The request body is larger than ${LIMIT} bytes`);
    expect(atAnswer).toEqual({ didRead: true, paused: true, ended: false });
  });
});
