import { connect } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listen } from './serve.js';

let server: ServerType;
let port: number;
beforeAll(async () => {
  const app = new Hono().get('/api/project.one', (c) => c.json({ ok: true }));
  port = await new Promise<number>((resolve) => {
    server = listen(app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) }, resolve);
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const expectEnvelope = (status: number, contentType: string | null, body: string) => {
  expect(status).toBe(400);
  expect(contentType).toMatch(/^application\/json/);
  expect(JSON.parse(body)).toMatchObject({ code: 'BAD_REQUEST', message: expect.any(String), issues: [{ path: [], message: expect.any(String) }], requestId: expect.stringMatching(/^req_/) });
};

it('answers a request line over the parser limit with BAD_REQUEST in the envelope, not a bare 431', async () => {
  const res = await fetch(`http://127.0.0.1:${port}/api/project.one?projectId=${'a'.repeat(100_000)}`);
  expectEnvelope(res.status, res.headers.get('content-type'), await res.text());
  const ok = await fetch(`http://127.0.0.1:${port}/api/project.one?projectId=a`);
  expect(ok.status).toBe(200);
});

it('answers a request that is not HTTP with BAD_REQUEST in the envelope', async () => {
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  const [head, body] = raw.split('\r\n\r\n');
  const type = /content-type: ([^\r\n]+)/i.exec(head ?? '')?.[1] ?? null;
  expectEnvelope(Number(head?.split(' ')[1]), type, body ?? '');
});

it('refuses headers sent a byte at a time once the headers timeout passes, and closes the connection both ways', async () => {
  let slow: ServerType | undefined;
  const slowPort = await new Promise<number>((resolve) => {
    slow = listen(new Hono(), { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }), headersTimeoutMs: 1_000 }, resolve);
  });
  try {
    const started = Date.now();
    const seen = await new Promise<{ answer: string; answeredAfter: number; closedAfter: number }>((resolve, reject) => {
      // Half-open allowed: the client does not close its side when the server ends its own.
      const socket = connect({ port: slowPort, host: '127.0.0.1', allowHalfOpen: true });
      const trickle = 'GET /api/project.one HTTP/1.1\r\nHost: x\r\nX-Pad: ' + 'a'.repeat(10_000);
      let i = 0;
      let answer = '';
      let answeredAfter = -1;
      // The client goes on sending after the answer, as a slowloris would: the server must not keep reading.
      const timer = setInterval(() => socket.writable && socket.write(trickle[i++ % trickle.length]!), 50);
      socket.on('data', (d) => {
        answer += d.toString();
        if (answeredAfter < 0) answeredAfter = Date.now() - started;
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ answer, answeredAfter, closedAfter: Date.now() - started });
      });
      setTimeout(() => {
        clearInterval(timer);
        socket.destroy();
        reject(new Error(`still open after 15 s (answered: ${JSON.stringify(answer.slice(0, 80))})`));
      }, 15_000).unref();
    });
    const [head, body] = seen.answer.split('\r\n\r\n');
    expectEnvelope(Number(head?.split(' ')[1]), /content-type: ([^\r\n]+)/i.exec(head ?? '')?.[1] ?? null, body ?? '');
    expect(JSON.parse(body!).message).toContain('did not arrive in time');
    expect(seen.answeredAfter).toBeLessThan(8_000);
    expect(seen.closedAfter).toBeLessThan(seen.answeredAfter + 5_000);
  } finally {
    await new Promise<void>((resolve) => slow!.close(() => resolve()));
  }
});
