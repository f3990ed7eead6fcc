import { defineConfig } from 'vite';

// Built into <repo>/dist/dashboard, which the control plane serves at `/` (http/dashboard.ts).
// Hashed file names under assets/: the control plane lets browsers keep them for a year.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../../dist/dashboard',
    emptyOutDir: true,
    target: 'es2022',
    // No inline script or module preload polyfill: the CSP allows scripts from the origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
