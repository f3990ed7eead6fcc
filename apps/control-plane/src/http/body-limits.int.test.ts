import { request } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../testing/harness.js';
import { MAX_JSON_BODY_BYTES } from './body.js';
import { JSON_BODY_DEADLINE_MS } from './mount.js';

/**
 * Bodies are counted as they arrive, over a real socket: a chunked body (no content-length)
 * past its limit is answered at the limit, and the connection closed, while the client is
 * still sending; an anonymous caller is answered before any of its body is read.
 */
const MAX_ARCHIVE_BYTES = 256 * 1024;
/** What each client offers to send: far past every limit. */
const OFFERED = 96 * 1024 * 1024;
const CHUNK = 64 * 1024;

let t: TestPlatform;
let server: ReturnType<typeof serve>;
let port: number;
beforeAll(async () => {
  t = await startTestPlatform({ database: 'pglite', archives: { maxBytes: MAX_ARCHIVE_BYTES } });
  server = serve({ fetch: t.platform.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.close();
});

interface Sent {
  status: number;
  body: any;
  /** Bytes the client had handed to its socket when the answer arrived. */
  sentWhenAnswered: number;
  /** Whether the client got to send everything it offered. */
  sentAll: boolean;
  heapGrowth: number;
}

/**
 * POSTs `head`, then `fill` repeated up to OFFERED bytes, with `transfer-encoding: chunked`
 * and backpressure, stopping when the answer arrives or the connection closes.
 */
function sendChunked(op: string, headers: Record<string, string>, head: string, fill: Buffer): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    let sent = 0;
    let answered = false;
    let sentWhenAnswered = -1;
    let heapPeak = 0;
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/api/${op}`,
      headers: { ...headers, 'transfer-encoding': 'chunked' },
    });
    const timer = setTimeout(() => req.destroy(new Error('no answer within 30 s')), 30_000);
    req.on('response', (res) => {
      answered = true;
      sentWhenAnswered = sent;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        clearTimeout(timer);
        const usage = process.memoryUsage();
        heapPeak = Math.max(heapPeak, usage.heapUsed + usage.arrayBuffers);
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), sentWhenAnswered, sentAll: sent >= OFFERED, heapGrowth: heapPeak - heapBefore });
      });
    });
    // After the answer the server closes the connection: a write then fails, which is the point.
    req.on('error', (err) => {
      if (!answered) {
        clearTimeout(timer);
        reject(err);
      }
    });
    const pump = () => {
      if (sent === 0) {
        req.write(head);
        sent += Buffer.byteLength(head);
      }
      while (!answered && !req.destroyed && sent < OFFERED) {
        const usage = process.memoryUsage();
        heapPeak = Math.max(heapPeak, usage.heapUsed + usage.arrayBuffers);
        sent += fill.length;
        if (!req.write(fill)) return void req.once('drain', pump);
      }
      if (sent >= OFFERED && !answered) req.end();
    };
    pump();
  });
}

describe('request bodies over their limit', () => {
  it("answers a chunked JSON body past 5 MiB with BAD_REQUEST at the limit, and reads no further", async () => {
    const r = await sendChunked('project.create', { 'x-api-key': t.ownerKey, 'content-type': 'application/json' }, '{"name":"', Buffer.alloc(CHUNK, 'a'));
    expect(r.sentAll).toBe(false);
    // Answered near the limit: what the socket buffers hold beyond it, not the 96 MiB offered.
    expect(r.sentWhenAnswered).toBeLessThan(MAX_JSON_BODY_BYTES + 24 * 1024 * 1024);
    expect(r.heapGrowth).toBeLessThan(48 * 1024 * 1024);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'BAD_REQUEST', message: `The request body is larger than ${MAX_JSON_BODY_BYTES} bytes` });
  });

  it('answers an anonymous caller UNAUTHORIZED without reading its body', async () => {
    const r = await sendChunked('project.create', { 'content-type': 'application/json' }, '{"name":"', Buffer.alloc(CHUNK, 'a'));
    expect(r.sentAll).toBe(false);
    expect(r.sentWhenAnswered).toBeLessThan(24 * 1024 * 1024);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'UNAUTHORIZED', requestId: expect.any(String) });
  });

  it('answers a chunked upload past its limit (the bytes before the first part count too) and reads no further', async () => {
    const app = await t.call('application.create', { name: 'drop', environmentId: (await t.call('project.create', { name: 'p' })).body.environments[0].environmentId, sourceType: 'drop' });
    // A multipart preamble is skipped by the parser, not stored: only counting every byte stops it.
    const r = await sendChunked(
      'application.dropDeployment',
      { 'x-api-key': t.ownerKey, 'content-type': 'multipart/form-data; boundary=XbX' },
      `preamble of ${app.body.applicationId}\r\n`,
      Buffer.alloc(CHUNK, 'p'),
    );
    expect(r.sentAll).toBe(false);
    expect(r.sentWhenAnswered).toBeLessThan(MAX_ARCHIVE_BYTES + 1024 * 1024 + 24 * 1024 * 1024);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'BAD_REQUEST', issues: [{ path: ['archive'] }] });
  });

  it('still takes a JSON body under the limit, sent chunked', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/project.create`, {
      method: 'POST',
      headers: { 'x-api-key': t.ownerKey, 'content-type': 'application/json' },
      body: new Blob([JSON.stringify({ name: 'x', description: 'd'.repeat(MAX_JSON_BODY_BYTES - 100) })]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(res.status, await res.clone().text().then((s) => s.slice(0, 200))).toBe(200);
  });
});
describe('a small body refused before it is read', () => {
  it('is read and dropped, so a client that is still sending gets the answer (and the connection stays open)', async () => {
    const form = new FormData();
    form.set('applicationId', 'app_missing');
    form.set('archive', new Blob([Buffer.alloc(32 * 1024, 1)]), 'site.zip');
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/application.dropDeployment`, { method: 'POST', headers: { 'x-api-key': 'skf_wrong' }, body: form });
      expect(res.status).toBe(401);
      expect(res.headers.get('connection')).not.toBe('close');
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    }
  });
});

/** Sends a POST's headers and the start of a 1 000-byte body, then one byte a second; resolves with the answer's head and when it came. */
function trickle(headers: string, waitMs: number): Promise<{ head: string; body: string; after: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`POST /api/project.create HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n${headers}\r\n{"name":"`),
      );
      // One byte a second, as a slowloris would send it: 1 000 bytes would take over 16 minutes.
      const timer = setInterval(() => socket.writable && socket.write('a'), 1_000);
      let text = '';
      socket.on('data', (d) => {
        text += d.toString();
        const [head, body] = text.split('\r\n\r\n');
        if (body !== undefined && body.endsWith('}')) {
          clearInterval(timer);
          socket.destroy();
          resolve({ head: head!, body, after: Date.now() - started });
        }
      });
      socket.on('error', () => undefined);
      setTimeout(() => {
        clearInterval(timer);
        socket.destroy();
        reject(new Error(`no answer within ${waitMs / 1000} s`));
      }, waitMs).unref();
  });
}

describe('a body trickled a byte a second', () => {
  it('refused before it is read: answered once the drain deadline passes, and the connection closed', async () => {
    const answer = await trickle('', 20_000);
    expect(answer.head).toMatch(/^HTTP\/1\.1 401/);
    expect(answer.head.toLowerCase()).toContain('connection: close');
    expect(answer.after).toBeLessThan(10_000);
  }, 30_000);

  it('of a caller with a key: refused once the JSON body deadline passes, and the connection closed', async () => {
    const answer = await trickle(`x-api-key: ${t.ownerKey}\r\n`, 45_000);
    expect(answer.head).toMatch(/^HTTP\/1\.1 400/);
    expect(answer.head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'BAD_REQUEST', message: 'The request body did not arrive within 30 s' });
    expect(answer.after).toBeLessThan(JSON_BODY_DEADLINE_MS + 5_000);
  }, 60_000);
});
