import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';

const appRoot = join(import.meta.dirname, '..', '..');

/** Builds the dashboard into a new temporary folder (never the repository's dist/), as tools/up builds it. */
export async function buildDashboard(): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), 'skiff-dashboard-build-'));
  await build({ configFile: join(appRoot, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  return outDir;
}
