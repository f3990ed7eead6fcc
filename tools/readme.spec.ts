// Keeps what the README and docs/ state about the repository true: the
// operations beyond the spec the README lists, and the paths both name.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allContracts } from '@skiff/contracts';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const specOperations = new Set(
  readFileSync(`${root}libs/contracts/spec-operations.txt`, 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(' ')[1]),
);

describe('README.md', () => {
  it('names every operation beyond the spec', () => {
    const beyond = allContracts.map((c) => c.name).filter((name) => !specOperations.has(name));
    expect(beyond.length).toBeGreaterThan(0);
    expect(beyond.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('names only paths of the repository that exist', () => {
    expect(missingPaths(readme)).toEqual([]);
  });
});

describe.each(['docs/architecture.md', 'docs/security.md'])('%s', (doc) => {
  it('names only paths of the repository that exist', () => {
    expect(missingPaths(readFileSync(`${root}${doc}`, 'utf8'))).toEqual([]);
  });
});

/** The repository paths a document names in backticks (`apps/…`, `libs/…`…) that do not exist. */
function missingPaths(text: string): string[] {
  const paths = [...text.matchAll(/`((?:apps|libs|tools|docs|proto)\/[^`\s]*)`/g)].map((m) => m[1]!);
  expect(paths.length).toBeGreaterThan(0);
  return paths.filter((p) => !existsSync(`${root}${p.replace(/[<*].*$/, '')}`));
}
