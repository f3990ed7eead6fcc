#!/usr/bin/env node
// The `skiff` command: the bundled CLI (bundle.mjs), or its TypeScript sources through tsx
// when the bundle cannot be built.
import { pathToFileURL } from 'node:url';
import { freshBundle } from './bundle.mjs';

const bundle = await freshBundle();
let main;
if (bundle) ({ main } = await import(pathToFileURL(bundle).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/main.ts'));
}
await main();
