import { serve } from '@hono/node-server';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../testing/harness.js';

// A stand-in for the built dashboard: the control plane's tests never need the real build
// (apps/dashboard's browser test serves that one).
let dir: string;
let outside: string;
let t: TestPlatform;
let bare: TestPlatform;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-dashboard-'));
  outside = await mkdtemp(join(tmpdir(), 'skiff-outside-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>Skiff</title><script type="module" src="/assets/index-abc123.js"></script>');
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  await writeFile(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(outside, 'secret.txt'), 'not for the web');
  await symlink(join(outside, 'secret.txt'), join(dir, 'leak.txt'));
  await symlink(outside, join(dir, 'outdir'));
  await writeFile(join(dir, 'help.html'), '<!doctype html><title>Help</title>');
  await writeFile(join(dir, '100%.txt'), 'a percent in its name');
  await writeFile(join(dir, 'data.bin'), 'opaque');
  t = await startTestPlatform({ database: 'pglite', dashboardDir: dir });
  bare = await startTestPlatform({ database: 'pglite' });
});
afterAll(async () => {
  await t?.close();
  await bare?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const get = (path: string, init?: RequestInit, platform = t) => platform.platform.app.request(`http://skiff.test${path}`, init);
const directives = (csp: string) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));

describe('the dashboard at /', () => {
  it('serves index.html without a key, never cached, under a policy that allows this origin only', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = directives(res.headers.get('content-security-policy') ?? '');
    expect(csp.get('default-src')).toEqual(["'none'"]);
    for (const [name, values] of csp) {
      // No host, no inline script or style, no eval: 'self', 'none' and data: images only.
      expect(values.filter((v) => !["'self'", "'none'"].includes(v) && !(name === 'img-src' && v === 'data:')), name).toEqual([]);
    }
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(await res.text()).toContain('/assets/index-abc123.js');
  });

  it('lets browsers keep hashed assets for a year, other files revalidate', async () => {
    const asset = await get('/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const icon = await get('/favicon.svg');
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('cache-control')).toBe('no-cache');
  });

  it('answers index.html for app paths, but never for /api paths or missing files', async () => {
    const page = await get('/projects/prj_123');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Skiff</title>');
    for (const path of ['/api/nothing', '/api/project.nothing', '/api', '/assets/index-old.js', '/missing.png']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/json');
      expect(((await res.json()) as { code: string }).code, path).toBe('NOT_FOUND');
    }
    // The API still answers as before, and a POST to an app path is not the page.
    expect((await get('/api/project.all')).status).toBe(401);
    expect((await get('/projects', { method: 'POST' })).status).toBe(404);
    expect((await get('/health')).status).toBe(200);
  });

  it('serves nothing outside its folder: no traversal, no link leading out', async () => {
    for (const path of ['/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/assets/..%2f..%2fetc%2fpasswd', '/leak.txt', '/%00']) {
      const res = await get(path);
      expect(await res.text(), path).not.toMatch(/root:|not for the web/);
    }
    expect((await get('/leak.txt')).status).toBe(404);
  });

  it('decodes a path once: double encoding, encoded backslashes and NUL reach nothing outside', async () => {
    const paths = [
      '/%252e%252e/%252e%252e/etc/passwd',
      '/assets/%252e%252e%252f%252e%252e%252fetc%252fpasswd',
      '/..%5c..%5cetc%5cpasswd',
      '/%5c..%5c..%5cetc/passwd',
      '/.%2e/.%2e/etc/passwd',
      '/outdir/secret.txt',
      '/outdir/',
      '/outdir',
      '/index.html%00.txt',
      '/leak.txt%00',
    ];
    for (const path of paths) {
      const res = await get(path);
      expect(res.status, path).toBeLessThan(500);
      expect(await res.text(), path).not.toMatch(/root:|not for the web/);
    }
    // Served by its name encoded once (`%25` is `%`), not decoded twice.
    const percent = await get('/100%25.txt');
    expect(percent.status).toBe(200);
    expect(await percent.text()).toBe('a percent in its name');
    expect((await get('/%2e%2e%252findex.html')).status).toBe(404);
  });

  it('over a socket, a request target the client did not normalise reaches nothing outside', async () => {
    const server = serve({ fetch: t.platform.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
    const port = (server.address() as AddressInfo).port;
    const raw = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: skiff.test\r\nConnection: close\r\n\r\n`));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    try {
      for (const target of ['/../../../../etc/passwd', '/assets/../../outdir/secret.txt', '/..%2f..%2f..%2fetc/passwd', '/outdir/../outdir/secret.txt', '/%2e%2e/leak.txt', '/.\\..\\..\\etc\\passwd']) {
        const answer = await raw(target);
        expect(answer, target).toMatch(/^HTTP\/1\.1 [234]\d\d /);
        expect(answer, target).not.toMatch(/root:|not for the web/);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers very long paths without an error, and lists no folder', async () => {
    expect((await get(`/${'a'.repeat(300)}.js`)).status).toBe(404);
    expect((await get(`/assets/${'b/'.repeat(2000)}x.js`)).status).toBe(404);
    const app = await get(`/projects/${'c'.repeat(5000)}`);
    expect(app.status).toBe(200);
    expect(await app.text()).toContain('<title>Skiff</title>');
    // A folder is never listed: under assets/ it is missing, elsewhere the app's page.
    expect((await get('/assets/')).status).toBe(404);
    for (const path of ['/assets', '/']) expect(await (await get(path)).text(), path).toContain('<title>Skiff</title>');
  });

  it('answers HEAD as GET without a body, OPTIONS never with the page; every HTML answer carries the policy', async () => {
    for (const path of ['/', '/index.html', '/help.html', '/projects/prj_1']) {
      for (const method of ['GET', 'HEAD']) {
        const res = await get(path, { method });
        expect(res.status, `${method} ${path}`).toBe(200);
        expect(res.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
        expect(res.headers.get('content-security-policy'), `${method} ${path}`).toContain("frame-ancestors 'none'");
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        if (method === 'HEAD') expect(await res.text()).toBe('');
      }
    }
    const options = await get('/', { method: 'OPTIONS' });
    expect(options.status).toBe(404);
    expect(await options.text()).not.toContain('<title>');
    // Unknown kinds are opaque bytes the browser may not sniff.
    const bin = await get('/data.bin');
    expect(bin.headers.get('content-type')).toBe('application/octet-stream');
    expect(bin.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('is not served when no dashboard folder is configured: / is NOT_FOUND', async () => {
    const res = await get('/', undefined, bare);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
  });
});
