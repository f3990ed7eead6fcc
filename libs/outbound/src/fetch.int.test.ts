// The pinned fetch against real HTTP servers on loopback; DNS answers injected where a test
// needs a name to resolve somewhere in particular.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { outboundFetch } from './fetch.js';
import type { Resolver } from './resolve.js';

interface TestServer {
  port: number;
  /** What reached the server: method, path and Host header of each request. */
  seen: { path: string; host: string }[];
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

async function testServer(): Promise<TestServer> {
  const state: TestServer = {
    port: 0,
    seen: [],
    handle: (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((req, res) => {
    state.seen.push({ path: req.url ?? '', host: req.headers.host ?? '' });
    state.handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  return state;
}

/** A resolver that knows only the names given (and records what it was asked). */
const resolverOf = (answers: Record<string, string[]>, asked: string[] = []): Resolver => async (host) => {
  asked.push(host);
  const found = answers[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

const ALLOW = { allowPrivate: true };
const REFUSE = { allowPrivate: false };
const limits = { maxBytes: 1024, timeoutMs: 2000 };

let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  a = await testServer();
  b = await testServer();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});
beforeEach(() => {
  a.seen.length = 0;
  b.seen.length = 0;
  a.handle = (_req, res) => res.writeHead(200).end('hello');
});

describe('outboundFetch', () => {
  it('connects to the checked address of a name, the name still in Host', async () => {
    const asked: string[] = [];
    const answer = await outboundFetch(`http://catalog.skiff.test:${a.port}/x`, { ...limits, policy: ALLOW, resolver: resolverOf({ 'catalog.skiff.test': ['127.0.0.1'] }, asked) });
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('hello');
    expect(a.seen).toEqual([{ path: '/x', host: `catalog.skiff.test:${a.port}` }]);
    expect(asked).toEqual(['catalog.skiff.test']);
  });

  it('refuses a name whose answer mixes a public and a private address, connecting nowhere', async () => {
    for (const addresses of [['93.184.216.34', '127.0.0.1'], ['127.0.0.1', '93.184.216.34'], ['2606:4700::1', '::ffff:127.0.0.1']]) {
      const resolver = resolverOf({ 'mixed.skiff.test': addresses });
      await expect(outboundFetch(`http://mixed.skiff.test:${a.port}/`, { ...limits, policy: REFUSE, resolver }), addresses.join()).rejects.toThrow(
        /^mixed\.skiff\.test resolves to (127\.0\.0\.1|::ffff:127\.0\.0\.1): loopback addresses \(127\.0\.0\.0\/8(, IPv4-mapped)?\) are refused \(the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1\)$/,
      );
    }
    // Link-local is refused even where private addresses are allowed.
    const metadata = resolverOf({ 'meta.skiff.test': ['127.0.0.1', '169.254.169.254'] });
    await expect(outboundFetch(`http://meta.skiff.test:${a.port}/`, { ...limits, policy: ALLOW, resolver: metadata })).rejects.toThrow(
      'meta.skiff.test resolves to 169.254.169.254: cloud metadata addresses (169.254.169.254/32) are refused',
    );
    expect(a.seen).toEqual([]);
  });

  it('refuses loopback however the URL spells it, unless allowed', async () => {
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '127.1', '[::ffff:127.0.0.1]']) {
      await expect(outboundFetch(`http://${host}:${a.port}/`, { ...limits, policy: REFUSE }), host).rejects.toThrow(/loopback addresses \(127\.0\.0\.0\/8(, IPv4-mapped)?\) are refused/);
    }
    await expect(outboundFetch(`http://localhost:${a.port}/`, { ...limits, policy: REFUSE })).rejects.toThrow(/^localhost resolves to 127\.0\.0\.1: loopback addresses/);
    expect(a.seen).toEqual([]);
    expect((await outboundFetch(`http://2130706433:${a.port}/ok`, { ...limits, policy: ALLOW })).status).toBe(200);
    expect(a.seen.map((s) => s.path)).toEqual(['/ok']);
  });

  it('follows no redirect: the error names where it pointed, and the target is never asked', async () => {
    a.handle = (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${b.port}/inside` }).end();
    await expect(outboundFetch(`http://127.0.0.1:${a.port}/moved`, { ...limits, policy: ALLOW })).rejects.toThrow(
      `redirected to http://127.0.0.1:${b.port}/inside (HTTP 302); redirects are not followed`,
    );
    a.handle = (_req, res) => res.writeHead(307, { location: '/relative' }).end();
    await expect(outboundFetch(`http://127.0.0.1:${a.port}/moved`, { ...limits, policy: ALLOW })).rejects.toThrow(`redirected to http://127.0.0.1:${a.port}/relative (HTTP 307)`);
    expect(b.seen).toEqual([]);
  });

  it('stops at the size limit and the deadline, and says when a name does not resolve', async () => {
    a.handle = (_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 10; i++) res.write('x'.repeat(512));
      res.end();
    };
    await expect(outboundFetch(`http://127.0.0.1:${a.port}/`, { ...limits, policy: ALLOW })).rejects.toThrow('the answer is larger than 1024 bytes');
    a.handle = () => {};
    const started = Date.now();
    await expect(outboundFetch(`http://127.0.0.1:${a.port}/`, { maxBytes: 1024, timeoutMs: 300, policy: ALLOW })).rejects.toThrow('no complete answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(3000);
    const slowDns: Resolver = () => new Promise(() => {});
    await expect(outboundFetch('http://slow.skiff.test/', { maxBytes: 1024, timeoutMs: 300, policy: ALLOW, resolver: slowDns })).rejects.toThrow('no complete answer within 300 ms');
    await expect(outboundFetch('http://nowhere.skiff.test/', { ...limits, policy: ALLOW, resolver: resolverOf({}) })).rejects.toThrow('nowhere.skiff.test does not resolve');
    await expect(outboundFetch('file:///etc/passwd', { ...limits, policy: ALLOW })).rejects.toThrow('must be an http(s) URL');
  });
});
