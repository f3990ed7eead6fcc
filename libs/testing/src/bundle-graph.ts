import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

interface Metafile {
  inputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }> }>;
}

/** The banner both apps' bundles carry: `require` for the CommonJS packages inside an ES module bundle. */
export const REQUIRE_BANNER = `--banner:js=import{createRequire as __skiffRequire}from'node:module';const require=__skiffRequire(import.meta.url);`;

/** What an esbuild bundle of one entry holds, and what its entry reaches before any dynamic import. */
export interface BundleGraph {
  /** Every input the bundle holds (dynamically imported ones too). */
  inputs: string[];
  /**
   * Every input (and external package, not followed) reached from the entry through static
   * imports and require calls, with the chain of imports that reaches it.
   */
  staticallyReached(): Map<string, string[]>;
  /** `what: chain` for each statically reached input one of `lazy`'s patterns names (what should be reached only dynamically). */
  eager(lazy: Array<[string, RegExp]>): string[];
}

/**
 * Bundles `entry` (relative to `root`) with esbuild and `args` into `outfile`, with its
 * metafile beside it (`meta.json`), and reads the import graph out of that metafile.
 */
export async function bundleGraph(opts: { root: string; entry: string; args: string[]; outfile: string }): Promise<BundleGraph> {
  const metafile = join(dirname(opts.outfile), 'meta.json');
  await new Promise<void>((resolve, reject) =>
    execFile(
      join(opts.root, 'node_modules/.bin/esbuild'),
      [opts.entry, ...opts.args, `--outfile=${opts.outfile}`, '--log-level=error', `--metafile=${metafile}`],
      { cwd: opts.root },
      (err, _out, stderr) => (err ? reject(new Error(`esbuild failed: ${stderr}`)) : resolve()),
    ),
  );
  const meta = JSON.parse(readFileSync(metafile, 'utf8')) as Metafile;
  const staticallyReached = () => {
    const reached = new Map<string, string[]>([[opts.entry, [opts.entry]]]);
    const queue = [opts.entry];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const imp of meta.inputs[file]?.imports ?? []) {
        if (imp.kind !== 'import-statement' && imp.kind !== 'require-call') continue;
        if (reached.has(imp.path)) continue;
        reached.set(imp.path, [...reached.get(file)!, imp.path]);
        if (!imp.external) queue.push(imp.path);
      }
    }
    return reached;
  };
  return {
    inputs: Object.keys(meta.inputs),
    staticallyReached,
    eager(lazy) {
      const reached = staticallyReached();
      return lazy.flatMap(([what, pattern]) =>
        [...reached.keys()].filter((f) => pattern.test(f)).map((f) => `${what}: ${reached.get(f)!.join(' -> ')}`),
      );
    },
  };
}

/**
 * Runs a bundle with `hook` (CommonJS source) required first, in the bundle's folder with only
 * `env` (and PATH), and waits for it to exit however it does.
 */
export async function runBundleWithHook(bundle: string, hook: string, env: Record<string, string> = {}): Promise<void> {
  const hookFile = join(dirname(bundle), 'hook.cjs');
  writeFileSync(hookFile, hook);
  await new Promise<void>((resolve) =>
    execFile(process.execPath, ['--require', hookFile, bundle], { cwd: dirname(bundle), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } }, () => resolve()),
  );
}
