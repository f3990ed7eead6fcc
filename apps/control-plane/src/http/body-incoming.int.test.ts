import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBodyBytes } from './body.js';

/**
 * readBodyBytes over a real socket, from the node request and from a web `Request` over it
 * (header `x-source: web`): what the server answers, and whether the rest of the body was read.
 */
let server: Server;
let port: number;
const LIMIT = 1024;
/** The request as it was when answered. */
let atAnswer: { didRead: boolean; paused: boolean; ended: boolean } | undefined;
const seen = (req: IncomingMessage) => (atAnswer = { didRead: req.readableDidRead, paused: req.isPaused(), ended: req.readableEnded });

beforeAll(async () => {
  server = createServer((req, res) => {
    readBodyBytes(sourceOf(req), LIMIT, req.headers['x-deadline'] ? Number(req.headers['x-deadline']) : undefined).then(
      (bytes) => res.end(JSON.stringify({ ok: bytes.toString('utf8') })),
      (err: Error) => (seen(req), res.setHeader('connection', 'close').end(JSON.stringify({ error: err.message }))),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

function sourceOf(req: IncomingMessage): IncomingMessage | Request {
  if (req.headers['x-source'] !== 'web') return req;
  const length = req.headers['content-length'];
  const body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
  return new Request('http://local/', { method: 'POST', headers: length ? { 'content-length': length } : {}, body, duplex: 'half' } as RequestInit);
}

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

describe.each([
  { source: 'node', extra: {} as Record<string, string> },
  { source: 'web', extra: { 'x-source': 'web' } as Record<string, string> },
])('readBodyBytes from the $source request', ({ source, extra }) => {
  it('reads a body with a declared length, and a chunked one', async () => {
    expect(await post({ ...extra, 'content-length': '11' }, ['{"name":"x"'])).toEqual({ ok: '{"name":"x"' });
    expect(await post({ ...extra, 'transfer-encoding': 'chunked' }, ['{"a":', '"é"}'])).toEqual({ ok: '{"a":"é"}' });
    expect(await post({ ...extra, 'content-length': '0' }, [])).toEqual({ ok: '' });
  });

  it('refuses a declared length over the limit before reading anything', async () => {
    const answer = await post({ ...extra, 'content-length': String(LIMIT + 1) }, ['x'.repeat(LIMIT + 1)]);
    expect(answer.error).toBe(`The request body is larger than ${LIMIT} bytes`);
    expect(atAnswer!.didRead).toBe(false);
  });

  it('refuses a chunked body at the chunk that crosses the limit and reads no further', async () => {
    const answer = await post({ ...extra, 'transfer-encoding': 'chunked' }, ['x'.repeat(LIMIT - 10), 'y'.repeat(20), 'z'.repeat(64 * 1024)]);
    expect(answer.error).toBe(`The request body is larger than ${LIMIT} bytes`);
    // The web stream over the node request reads ahead on its own: only the node request is paused here.
    if (source === 'node') expect(atAnswer).toEqual({ didRead: true, paused: true, ended: false });
  });

  it('refuses a body still arriving at its deadline, and reads no further', async () => {
    const answer = await new Promise<any>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', headers: { ...extra, 'transfer-encoding': 'chunked', 'x-deadline': '300' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve(JSON.parse(body)));
      });
      req.on('error', reject);
      req.write('{"a":');
      // Never ended: the sender trickles nothing more.
    });
    expect(answer.error).toBe('The request body did not arrive within 0.3 s');
    if (source === 'node') expect(atAnswer).toMatchObject({ paused: true, ended: false });
    else expect(atAnswer).toMatchObject({ ended: false });
  });
});
