// The dashboard's weight: everything the first page loads, gzipped, under 300 kB (issue 20).
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, expect, it } from 'vitest';
import { buildDashboard } from './testing/build.js';

const LIMIT = 300 * 1024;
let dir = '';
afterAll(() => dir && rm(dir, { recursive: true, force: true }));

it('builds under 300 kB gzipped', async () => {
  dir = await buildDashboard();
  const files = [join(dir, 'index.html'), ...(await readdir(join(dir, 'assets'))).map((f) => join(dir, 'assets', f))];
  let total = 0;
  for (const file of files) total += gzipSync(await readFile(file), { level: 9 }).length;
  console.log(`dashboard bundle: ${files.length} files, ${(total / 1024).toFixed(1)} kB gzipped (limit ${LIMIT / 1024} kB)`);
  expect(total).toBeLessThan(LIMIT);
}, 60_000);
