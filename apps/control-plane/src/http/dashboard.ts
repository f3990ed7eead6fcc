import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import type { Context, Hono } from 'hono';

/**
 * The web dashboard (apps/dashboard, built into a folder: `SKIFF_DASHBOARD_DIR`, by default
 * `<repo>/dist/dashboard`) at `/`. Files under `assets/` carry a content hash in their name and
 * are kept by browsers for a year; `index.html` is asked again each time, so a new build shows
 * at the next load. Any other GET path outside `/api/` that names no file answers index.html
 * (the app routes in the browser); `/api/…` never does. The Content-Security-Policy lets the
 * page load and call this origin only: no inline script, no other host, no framing.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

const common = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** Mounted last (after the API): it answers only GET and HEAD paths nothing else took. */
export function mountDashboard(app: Hono, dir: string): void {
  const serve = async (c: Context) => {
    const path = c.req.path;
    if (path === '/api' || path.startsWith('/api/') || path === '/health' || path.startsWith('/webhooks/')) return null;
    // Resolved per request: a dashboard built (or rebuilt) after the start is served as it is now.
    const base = await realpath(dir).catch(() => null);
    if (!base) return null;
    const file = await fileFor(base, path);
    if (file) return send(c, file, path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    // A missing asset is a 404 (an old page asking for a file a new build replaced), not the app.
    if (path.startsWith('/assets/') || extname(path) !== '') return null;
    const index = await fileFor(base, '/index.html');
    return index ? send(c, index, 'no-cache') : null;
  };
  app.on(['GET', 'HEAD'], '*', async (c, next) => (await serve(c)) ?? next());
}

/** The regular file a URL path names inside `base`, or null (outside it, a folder, missing). */
async function fileFor(base: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.split('/').some((part) => part === '..')) return null;
  const candidate = join(base, decoded === '/' ? 'index.html' : decoded);
  try {
    const real = await realpath(candidate);
    if (real !== base && !real.startsWith(base + sep)) return null;
    return (await stat(real)).isFile() ? real : null;
  } catch {
    return null;
  }
}

async function send(c: Context, file: string, cacheControl: string) {
  const type = TYPES[extname(file)] ?? 'application/octet-stream';
  return c.body(await readFile(file), 200, { ...common, 'content-type': type, 'cache-control': cacheControl });
}
