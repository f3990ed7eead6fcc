// Skiff runs on Node 22 or later (24, the current LTS, is what tools/up and tools/test bring when
// the machine has an older one: tools/lib/setup.sh's ensure_node). The suite itself must run on it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const MIN_MAJOR = 22;

const packageJson = (dir: string) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { engines?: { node?: string } };

describe('the Node Skiff runs on', () => {
  it(`runs this suite on Node ${MIN_MAJOR} or later`, () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(MIN_MAJOR);
  });

  it(`declares node >=${MIN_MAJOR} in engines, at the root and in every workspace that declares one`, () => {
    expect(packageJson('.').engines?.node).toBe(`>=${MIN_MAJOR}`);
    const workspaces = ['apps', 'libs'].flatMap((d) => readdirSync(join(root, d)).map((name) => join(d, name)));
    for (const dir of workspaces) {
      const node = packageJson(dir).engines?.node;
      if (node !== undefined) expect(node, dir).toBe(`>=${MIN_MAJOR}`);
    }
  });

  it('bundles the control plane and the agent for that Node, and installs it when missing', () => {
    const setup = readFileSync(join(root, 'tools/lib/setup.sh'), 'utf8');
    expect(setup.match(/--target=node\d+/g)).toEqual([`--target=node${MIN_MAJOR}`, `--target=node${MIN_MAJOR}`]);
    expect(setup).toContain(`SKIFF_NODE_MIN_MAJOR=${MIN_MAJOR}\n`);
    expect(Number(/^SKIFF_NODE_VERSION=(\d+)\./m.exec(setup)?.[1])).toBeGreaterThanOrEqual(MIN_MAJOR);
  });
});
