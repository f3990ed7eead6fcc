import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleGraph, bundleGraph, runBundleWithHook } from './bundle-graph.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
mkdirSync(join(root, 'dist'), { recursive: true });
const dir = mkdtempSync(join(root, 'dist', 'bundle-graph-'));
const at = (name: string) => relative(root, join(dir, name));
let graph: BundleGraph;

beforeAll(async () => {
  writeFileSync(join(dir, 'entry.ts'), `import { a } from './a.ts';\nimport 'node:fs';\nexport const run = async () => (await import('./lazy.ts')).lazy + a;\nconsole.log(process.env.GREETING);\n`);
  writeFileSync(join(dir, 'a.ts'), `import { b } from './b.ts';\nexport const a = b + 1;\n`);
  writeFileSync(join(dir, 'b.ts'), `export const b = 1;\n`);
  writeFileSync(join(dir, 'lazy.ts'), `import { b } from './b.ts';\nexport const lazy = b + 2;\n`);
  graph = await bundleGraph({ root, entry: at('entry.ts'), args: ['--bundle', '--platform=node', '--format=esm'], outfile: join(dir, 'main.mjs') });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bundleGraph', () => {
  it('reaches through static imports only, with the chain, externals not followed', () => {
    const reached = graph.staticallyReached();
    expect(reached.get(at('b.ts'))).toEqual([at('entry.ts'), at('a.ts'), at('b.ts')]);
    expect(reached.get('node:fs')).toEqual([at('entry.ts'), 'node:fs']);
    expect(reached.has(at('lazy.ts'))).toBe(false);
    expect(graph.inputs).toContain(at('lazy.ts'));
  });

  it('names what a pattern says should be lazy, with the chain that reaches it', () => {
    expect(graph.eager([['b', /\/b\.ts$/], ['lazy', /\/lazy\.ts$/]])).toEqual([`b: ${at('entry.ts')} -> ${at('a.ts')} -> ${at('b.ts')}`]);
  });

  it('runs the bundle with a hook and the environment given', async () => {
    const report = join(dir, 'out.txt');
    await runBundleWithHook(join(dir, 'main.mjs'), `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, String(process.env.GREETING)));`, { GREETING: 'hi' });
    expect(readFileSync(report, 'utf8')).toBe('hi');
  });
});
