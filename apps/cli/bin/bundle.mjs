// The CLI as one bundled file (dist/cli/skiff.mjs at the repository root), built with esbuild
// when missing or older than a source: it starts in about a tenth of the time the TypeScript
// sources take through tsx (apps/cli/src/bundle.int.test.ts prints the figure).
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
export const bundlePath = join(root, 'dist', 'cli', 'skiff.mjs');
const SOURCES = ['apps/cli/src', 'libs/contracts/src'];

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

function newestSource() {
  let newest = mtime(join(root, 'apps/cli/package.json'));
  for (const dir of SOURCES) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(entry.name)) {
        newest = Math.max(newest, mtime(join(entry.parentPath, entry.name)));
      }
    }
  }
  return newest;
}

/** The bundle's path, built first when stale; null when it cannot be built (esbuild missing): run the sources instead. */
export async function freshBundle() {
  const built = mtime(bundlePath);
  if (built >= 0 && built >= newestSource()) return bundlePath;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return null;
  }
  // Written beside and renamed: two first runs at once never read half a file.
  const temporary = `${bundlePath}.${process.pid}.tmp`;
  mkdirSync(dirname(bundlePath), { recursive: true });
  try {
    await esbuild.build({
      entryPoints: [join(root, 'apps/cli/src/main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      outfile: temporary,
      logLevel: 'silent',
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: 'none',
      // CommonJS dependencies (yaml) call require(): give the ES module one.
      banner: { js: "import{createRequire as __skiffRequire}from'node:module';const require=__skiffRequire(import.meta.url);" },
    });
    renameSync(temporary, bundlePath);
    return bundlePath;
  } catch {
    rmSync(temporary, { force: true });
    return null;
  }
}
