// What an idle agent has loaded: the modules its entry point reaches through static imports
// (and require calls), as esbuild bundles them for tools/up. The Docker client (dockerode),
// archives and the command handlers are imported with the first command that needs them
// (docker/lazy-driver.ts, pipeline/lazy-handler.ts): a static import of one of them would
// load it into every idle agent again, ~1-9 MB each (`tools/bench agent` measures it).
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BundleGraph, REQUIRE_BANNER, bundleGraph, runBundleWithHook } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = 'apps/agent/src/main.ts';

/** Loaded only when a command needs them. */
const LAZY: Array<[string, RegExp]> = [
  ['dockerode', /^node_modules\/dockerode\//],
  ['docker-modem', /^node_modules\/docker-modem\//],
  ['the dockerode driver', /^apps\/agent\/src\/docker\/dockerode-driver\.ts$/],
  ['archive readers', /^node_modules\/(tar-fs|tar-stream|yauzl)\/|^libs\/archives\//],
  ['command handlers', /^apps\/agent\/src\/handlers\//],
  ['builds', /^apps\/agent\/src\/build\/(build-image|archive-source|archive-extract|git-source|docker-build|static-site|workdir)\.ts$/],
  ['compose stacks', /^apps\/agent\/src\/compose\/(lifecycle|readiness|stack-source|stack-dir|kept-files|deployed-file)\.ts$/],
];

let graph: BundleGraph;
const dir = mkdtempSync(join(tmpdir(), 'skiff-agent-graph-'));

beforeAll(async () => {
  // The bundle as build_agent (tools/lib/setup.sh) makes it.
  graph = await bundleGraph({
    root,
    entry: ENTRY,
    args: ['--bundle', '--platform=node', '--format=esm', '--target=node22',
      '--alias:ssh2=./tools/lib/agent-bundle/ssh2.cjs', '--alias:thread-stream=./tools/lib/agent-bundle/thread-stream.cjs',
      '--alias:yaml=./tools/lib/agent-bundle/yaml.cjs', REQUIRE_BANNER],
    outfile: join(dir, 'main.mjs'),
  });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the idle agent', () => {
  it('does not load what only commands need', () => {
    expect(graph.eager(LAZY)).toEqual([]);
  });

  // The bundle hoists every `import … from 'node:…'` of every module to its top, lazy ones
  // included, and an ESM import of a builtin reads all its getters: node:http's load undici.
  it('loads no builtin it does not use when it starts', async () => {
    const report = join(dir, 'builtins.json');
    const hook = `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));`;
    // Without its configuration it stops at once, after the bundle's imports and top level ran.
    await runBundleWithHook(join(dir, 'main.mjs'), hook);
    const loaded = (JSON.parse(readFileSync(report, 'utf8')) as string[]).filter((m) => m.startsWith('NativeModule '));
    expect(loaded.filter((m) => /undici|^NativeModule https$/.test(m))).toEqual([]);
  });

  it('does not start pino transports (their worker thread), which the bundle leaves out', () => {
    expect([...graph.staticallyReached().keys()].filter((f) => f.startsWith('node_modules/thread-stream/'))).toEqual([]);
  });

  // tools/lib/agent-bundle/yaml.cjs stands in for yaml: loaded at the first use of an export.
  it("loads yaml at the first use of one of its exports, and has all of them", () => {
    const require = createRequire(import.meta.url);
    const standIn = join(root, 'tools/lib/agent-bundle/yaml.cjs');
    const real = require.resolve('yaml');
    delete require.cache[real];
    const lazy = require(standIn) as typeof import('yaml');
    expect(Object.keys(lazy)).toEqual(Object.keys(require('yaml') as object));
    delete require.cache[real];
    delete require.cache[standIn];
    const fresh = require(standIn) as typeof import('yaml');
    expect(require.cache[real]).toBeUndefined();
    expect(fresh.parse('a: [1, 2]')).toEqual({ a: [1, 2] });
    expect(fresh.isMap(fresh.parseDocument('a: 1').contents)).toBe(true);
    expect(require.cache[real]).toBeDefined();
  });

  it('still bundles them, for the commands that import them', () => {
    for (const [what, pattern] of LAZY) expect(graph.inputs.some((f) => pattern.test(f)), what).toBe(true);
  });
});
