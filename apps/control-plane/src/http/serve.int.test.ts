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
