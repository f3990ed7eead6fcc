// What an idle control plane has evaluated: the modules its entry point reaches through static
// imports (and require calls), as build_control_plane (tools/lib/setup.sh) bundles them. What
// only some requests use is imported where it is used (still in the one file, evaluated with
// its first use): a static import of one of them would load it into every idle control plane
// again (`tools/bench` prints "RSS idle"; the bound is 120 MB on PostgreSQL).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BundleGraph, REQUIRE_BANNER, bundleGraph, runBundleWithHook } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = 'apps/control-plane/src/main.ts';

/** Loaded only when a request or a job needs them. */
const LAZY: Array<[string, RegExp]> = [
  ['the AWS SDK (backups to S3)', /^node_modules\/(@aws-sdk|@smithy)\//],
  ['nodemailer (email notifications)', /^node_modules\/nodemailer\//],
  ['age (encrypted backups)', /^node_modules\/(age-encryption|@noble\/post-quantum)\/|^libs\/archives\/src\/age\.ts$/],
  ['archive readers (uploads)', /^node_modules\/yauzl\/|^libs\/archives\/src\/(index|archive-reader)\.ts$/],
];
/** External to the bundle, and imported only on the embedded database. */
const PGLITE = /^(@electric-sql\/pglite|kysely-pglite-dialect)(\/|$)/;

/** build_control_plane's flags (the test checks tools/lib/setup.sh still has each). */
const FLAGS = [
  '--bundle', '--platform=node', '--format=esm', '--target=node22',
  '--minify-whitespace', '--minify-syntax', '--legal-comments=none', '--charset=ascii',
  '--external:@electric-sql/pglite', '--external:kysely-pglite-dialect', '--external:pg-native',
];

let graph: BundleGraph;
// Under the repository, as dist/control-plane is: the bundle resolves redoc's files in node_modules.
mkdirSync(join(root, 'dist'), { recursive: true });
const dir = mkdtempSync(join(root, 'dist', 'lazy-load-'));
const bundle = join(dir, 'main.mjs');

beforeAll(async () => {
  graph = await bundleGraph({ root, entry: ENTRY, args: [...FLAGS, REQUIRE_BANNER], outfile: bundle });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the idle control plane', () => {
  it('builds as build_control_plane does', () => {
    const setup = readFileSync(join(root, 'tools/lib/setup.sh'), 'utf8');
    const build = setup.slice(setup.indexOf('build_control_plane() {'), setup.indexOf('\n}', setup.indexOf('build_control_plane() {')));
    for (const flag of FLAGS) expect(build, flag).toContain(flag);
  });

  it('does not evaluate what only some requests use', () => {
    expect(graph.eager(LAZY)).toEqual([]);
  });

  it('does not import PGlite until it uses it (on PostgreSQL never)', () => {
    expect([...graph.staticallyReached().entries()].filter(([f]) => PGLITE.test(f)).map(([, chain]) => chain.join(' -> '))).toEqual([]);
  });

  it('still bundles them, for the requests that import them', () => {
    for (const [what, pattern] of LAZY) expect(graph.inputs.some((f) => pattern.test(f)), what).toBe(true);
  });

  // V8 keeps the bundle's source in memory; one character outside Latin-1 (a dash in a
  // comment) makes it keep all of it as UTF-16, twice the size.
  it('is ASCII only, so V8 holds its source one byte a character', () => {
    const source = readFileSync(bundle);
    expect(source.findIndex((b) => b > 0x7f)).toBe(-1);
  });

  // Their dynamic imports stay inside the file (no chunks beside it).
  it('is one file that starts alone', async () => {
    expect(readdirSync(dir).sort()).toEqual(['main.mjs', 'meta.json']);
    // A bad port stops it in readConfig, after every module's top level ran.
    const report = join(dir, 'error.txt');
    const hook = `process.on('uncaughtException', (e) => { require('node:fs').writeFileSync(${JSON.stringify(report)}, e.message); process.exit(1); });`;
    await runBundleWithHook(bundle, hook, { SKIFF_PORT: 'none' });
    expect(readFileSync(report, 'utf8')).toBe('SKIFF_PORT is not a port: none');
  });
});
