// The key reaches no other program: the CLI starts none (docs/security.md, "The CLI's keys").
// Whoever needs one must pass the key through its environment or stdin, never its arguments,
// and change this test with that review.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('.', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'testing' ? [] : sources(path);
    return /\.ts$/.test(e.name) && !/\.(spec|test|int\.test|e2e\.test)\.ts$/.test(e.name) ? [path] : [];
  });
}

describe('the CLI', () => {
  it('starts no child process (so the key is in no argv but its own header)', () => {
    const files = sources(root);
    expect(files.length).toBeGreaterThan(10);
    const starting = files.filter((f) => /node:child_process|\bchild_process\b|\bexeca\b|process\.binding/.test(readFileSync(f, 'utf8')));
    expect(starting.map((f) => f.slice(root.length))).toEqual([]);
  });
});
