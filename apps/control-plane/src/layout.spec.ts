// The control plane's layout rules (docs/architecture.md, "Where each capability lives"), checked on the source files:
// no import cycles, services never reach into the HTTP layer, no file grows past 400 lines.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));
const MAX_LINES = 400;

const isTest = (file: string) => /\.(spec|int\.test|e2e\.test)\.ts$/.test(file);
/** Generated code is checked in elsewhere (libs/proto); none lives here, but the rule says so. */
const isGenerated = (file: string) => file.split(sep).includes('gen');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !isTest(entry.name) ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g;

/** The relative imports of each source file, as paths under SRC (`.js` specifiers name `.ts` files). */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => relative(SRC, normalize(join(dirname(file), m[1]!.replace(/\.js$/, '.ts')))));
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** Every import cycle (each once, as the path that closes it), by depth-first search. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

const files = sourceFiles(SRC);
const graph = importGraph(files);

describe('the control plane layout', () => {
  it('finds the source files', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.has(join('services', 'shared', 'deps.ts'))).toBe(true);
  });

  it('has no import cycles', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  it('keeps services away from the HTTP layer', () => {
    const http = [...graph].flatMap(([file, targets]) =>
      file.startsWith(`services${sep}`) ? targets.filter((t) => /^(http|routers)[\\/]/.test(t)).map((t) => `${file} → ${t}`) : [],
    );
    expect(http).toEqual([]);
  });

  it(`has no source file over ${MAX_LINES} lines`, () => {
    const long = files
      .filter((file) => !isGenerated(file))
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('names a cycle when there is one', () => {
    const sample = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(sample)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
