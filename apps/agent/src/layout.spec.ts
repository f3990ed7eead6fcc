// The agent's layers: a module imports only from its own folder and from folders below it,
// so the command pipeline knows no handler, handlers never reach into control/, and the
// helpers below them (compose, deployments, workloads, build, docker…) never reach up.
// Tests are left out: they may use the test helpers (testing/) from anywhere.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** From the top down: each folder (or top-level file) may import only from those after it. */
const LAYERS = [
  'main.ts',
  'testing/',
  'agent.ts',
  'removed-server.ts',
  'control/',
  'handlers/',
  'compose/',
  'deployments/',
  'workloads/',
  'build/',
  'dumps/',
  'pipeline/',
  'proxy/',
  'reports/',
  'reconcile/',
  'docker/',
  'nats/',
  'abort/',
  'command-key.ts',
  'credential.ts',
  'channel-ca.ts',
  'config.ts',
  'version.ts',
];

const SRC = dirname(fileURLToPath(import.meta.url));
const isTest = (file: string) => /\.(spec|int\.test|e2e\.test)\.ts$/.test(file);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !isTest(entry.name) ? [relative(SRC, path)] : [];
  });
}

/** The layer of a file (its path under src/, with `/`), or -1 when it is in none. */
function layerOf(file: string): number {
  const path = file.split('\\').join('/');
  return LAYERS.findIndex((layer) => (layer.endsWith('/') ? path.startsWith(layer) : path === layer));
}

/** The relative imports of a source file, as paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
  return specifiers.map((spec) => relative(SRC, resolve(SRC, dirname(file), spec)).replace(/\.js$/, '.ts'));
}

describe('the agent source layout', () => {
  const files = sourceFiles(SRC);

  it('places every source file in a layer', () => {
    expect(files.filter((file) => layerOf(file) < 0)).toEqual([]);
  });

  it('never imports from a layer above', () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => layerOf(target) < layerOf(file))
        .map((target) => `${file} imports ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('reads the imports it checks', () => {
    expect(importsOf('agent.ts')).toContain('pipeline/runner.ts');
  });
});
