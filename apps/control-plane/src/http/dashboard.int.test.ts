import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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

  it('is not served when no dashboard folder is configured: / is NOT_FOUND', async () => {
    const res = await get('/', undefined, bare);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
  });
});
