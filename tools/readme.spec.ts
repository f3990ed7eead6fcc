// Keeps what the README states about the repository true: the operations beyond the spec it
// lists, and the paths it names.
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
    const paths = [...readme.matchAll(/`((?:apps|libs|tools|docs|proto)\/[^`\s]*)`/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((p) => !existsSync(`${root}${p.replace(/\*.*$/, '')}`))).toEqual([]);
  });
});
