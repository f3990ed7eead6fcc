import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIncomingBytes } from './body.js';

/** readIncomingBytes over a real socket: what the server answers, and whether the rest of the body was read. */
let server: Server;
let port: number;
const LIMIT = 1024;
/** The request as it was when answered. */
let atAnswer: { didRead: boolean; paused: boolean; ended: boolean } | undefined;
const seen = (req: IncomingMessage) => (atAnswer = { didRead: req.readableDidRead, paused: req.isPaused(), ended: req.readableEnded });

beforeAll(async () => {
  server = createServer((req, res) => {
    readIncomingBytes(req, LIMIT, req.headers['x-deadline'] ? Number(req.headers['x-deadline']) : undefined).then(
      (bytes) => res.end(JSON.stringify({ ok: bytes.toString('utf8') })),
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

describe('readIncomingBytes', () => {
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

  it('refuses a body still arriving at its deadline, and reads no further', async () => {
    const answer = await new Promise<any>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', headers: { 'transfer-encoding': 'chunked', 'x-deadline': '300' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve(JSON.parse(body)));
      });
      req.on('error', reject);
      req.write('{"a":');
      // Never ended: the sender trickles nothing more.
    });
    expect(answer.error).toBe('The request body did not arrive within 0.3 s');
    expect(atAnswer).toMatchObject({ paused: true, ended: false });
  });
});
