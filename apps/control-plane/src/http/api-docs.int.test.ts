import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ database: 'pglite' });
});
afterAll(() => t?.close());

const origin = 'http://skiff.test';
// No key: the reference is public, like the document it renders.
const get = (path: string) => t.platform.app.request(`${origin}${path}`);

/** The CSP's directives, by name. */
const directives = (csp: string) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));

it('serves the reference page at /api/docs, without a key, under a policy that allows no other origin', async () => {
  const res = await get('/api/docs');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
  const csp = directives(res.headers.get('content-security-policy') ?? '');
  expect(csp.get('default-src')).toEqual(["'none'"]);
  for (const name of ['script-src', 'style-src', 'img-src', 'font-src', 'connect-src', 'worker-src']) {
    // Only this origin, inline styles, data: and blob: URLs: never a host.
    expect(csp.get(name)?.filter((source) => !["'self'", "'unsafe-inline'", 'data:', 'blob:'].includes(source)), name).toEqual([]);
  }
  expect(csp.get('script-src')).toEqual(["'self'"]);
  const html = await res.text();
  expect(html).not.toMatch(/https?:|\/\//);
  expect(html).toContain('<div id="reference">');
});

it('serves every asset the page names from here, with its type and caching, and the script reads the document from here', async () => {
  const html = await (await get('/api/docs')).text();
  const assets = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  expect(assets).toHaveLength(2);
  const base = new URL(`${origin}/api/docs`);
  const fetched = [];
  for (const asset of assets) {
    const url = new URL(asset, base);
    expect(url.origin).toBe(origin);
    const res = await t.platform.app.request(url.href);
    expect(res.status, asset).toBe(200);
    expect(res.headers.get('content-type'), asset).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control'), asset).toMatch(/public, max-age=\d+/);
    fetched.push({ path: url.pathname, cache: res.headers.get('cache-control'), body: await res.text() });
  }
  // Redoc's bundle, as the package ships it, under a versioned URL kept for a year.
  const bundle = fetched.find((a) => /^\/api\/docs\/redoc-\d+\.\d+\.\d+\.js$/.test(a.path))!;
  const require = createRequire(import.meta.url);
  expect(bundle.body).toBe(readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8'));
  expect(bundle.cache).toContain('immutable');
  const init = fetched.find((a) => a !== bundle)!;
  expect(init.body).toContain("Redoc.init('openapi.json'");
  expect(init.body).not.toMatch(/https?:|\/\//);
  expect(new URL('openapi.json', base).pathname).toBe('/api/openapi.json');
  expect((await get('/api/openapi.json')).status).toBe(200);
});

it('answers NOT_FOUND in the envelope for another path under /api/docs', async () => {
  const res = await get('/api/docs/other.js');
  expect(res.status).toBe(404);
  expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
});
