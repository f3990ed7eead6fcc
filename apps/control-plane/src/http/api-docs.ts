import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Hono } from 'hono';
import redocPackage from 'redoc/package.json' with { type: 'json' };

/**
 * `/api/docs`: a reference of the API, rendered in the browser by Redoc's standalone bundle
 * from `/api/openapi.json`. Everything is served from here (no CDN, no web fonts), and the
 * Content-Security-Policy keeps the page from reaching any other origin. Unauthenticated, like
 * the document it renders.
 */
const require = createRequire(import.meta.url);
const BUNDLE_FILE = require.resolve('redoc/bundles/redoc.standalone.js');

/** The bundle's URL carries its version, so browsers keep it until the package changes. */
const BUNDLE_PATH = `/api/docs/redoc-${redocPackage.version}.js`;
const INIT_PATH = '/api/docs/init.js';

export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Redoc's components insert their <style> elements at run time.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  // The search index runs in a worker made from a blob.
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Relative URLs: the page answers at /api/docs, whatever origin (or proxy prefix) serves it.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Skiff API reference</title>
</head>
<body>
<div id="reference"></div>
<script src="${BUNDLE_PATH.replace('/api/', '')}"></script>
<script src="${INIT_PATH.replace('/api/', '')}"></script>
</body>
</html>
`;

const SYSTEM_FONTS = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const MONO_FONTS = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace';

const INIT = `Redoc.init('openapi.json', ${JSON.stringify({
  theme: { typography: { fontFamily: SYSTEM_FONTS, headings: { fontFamily: SYSTEM_FONTS }, code: { fontFamily: MONO_FONTS } } },
  expandResponses: '200',
})}, document.getElementById('reference'));
`;

const common = { 'content-security-policy': API_DOCS_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

export function mountApiDocs(app: Hono): void {
  app.get('/api/docs', (c) =>
    c.body(PAGE, 200, { ...common, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300' }),
  );
  app.get(INIT_PATH, (c) =>
    c.body(INIT, 200, { ...common, 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' }),
  );
  // Read per request rather than held in memory: browsers keep it, so it is seldom asked for.
  app.get(BUNDLE_PATH, async (c) =>
    c.body(await readFile(BUNDLE_FILE), 200, {
      ...common,
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
    }),
  );
}
