import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parallelFiles, runsInParallel } from './test-groups.js';

const root = join(import.meta.dirname, '..');

describe('test groups', () => {
  it('runs pure specs and self-contained integration tests two at a time', () => {
    expect(runsInParallel('libs/domain/src/x.spec.ts', "it('names docker', () => {})")).toBe(true);
    expect(runsInParallel('apps/control-plane/src/x.int.test.ts', 'startTestPlatform({ database: "pglite" })')).toBe(true);
  });

  it('runs one at a time what reaches the engine, the swarm, NATS, tools/up or fixed /tmp paths, and every end-to-end file', () => {
    for (const text of ["new Docker({ socketPath: '/var/run/docker.sock' })", "inject('natsUrl')", 'TestServices // swarm', 'startToolsUp(', "rmSync('/tmp/skiff-x')"]) {
      expect(runsInParallel('apps/agent/src/x.int.test.ts', text), text).toBe(false);
    }
    expect(runsInParallel('apps/control-plane/src/x.e2e.test.ts', '')).toBe(false);
    expect(runsInParallel('tools/x.e2e.test.ts', '')).toBe(false);
  });

  it('puts the repository files where their text says', () => {
    const parallel = parallelFiles(root);
    expect(parallel).toContain('tools/redos.spec.ts');
    expect(parallel).toContain('apps/control-plane/src/http/body-limits.int.test.ts');
    expect(parallel.some((f) => f.includes('node_modules'))).toBe(false);
    for (const serial of ['apps/agent/src/compose/compose-stacks.int.test.ts', 'apps/control-plane/src/services/deployments/unreceived-work.int.test.ts', 'apps/control-plane/src/main.e2e.test.ts']) {
      expect(parallel, serial).not.toContain(serial);
    }
    for (const file of parallel.filter((f) => f.endsWith('.int.test.ts'))) {
      expect(readFileSync(join(root, file), 'utf8'), file).not.toMatch(/docker|nats/i);
    }
  });
});
