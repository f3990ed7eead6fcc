import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { timingTable } from './file-timings.js';

const root = join(import.meta.dirname, '..');
// Under the repository, where the run resolves vitest.
mkdirSync(join(root, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(root, '.tmp', 'file-timings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('file timings', () => {
  it('writes one row a file, slowest first, hooks counted', () => {
    expect(timingTable([{ file: 'a.spec.ts', wall: 1.5, run: 1.2, collect: 0.2, setup: 0.1, tests: 3, end: 2 }])).toBe(
      'wall_s\trun_s\tcollect_s\tsetup_s\ttests\tend_s\tfile\n1.5\t1.2\t0.2\t0.1\t3\t2\ta.spec.ts\n',
    );
  });

  it("counts a file's beforeAll and afterAll, which the JSON report leaves out", () => {
    writeFileSync(
      join(dir, 'slow-hooks.spec.ts'),
      "import { afterAll, beforeAll, it } from 'vitest';\n" +
        'const pause = () => new Promise((r) => setTimeout(r, 700));\n' +
        'beforeAll(pause);\nafterAll(pause);\nit("is quick", () => {});\n',
    );
    writeFileSync(join(dir, 'vitest.config.ts'), "export default { test: { include: ['*.spec.ts'] } };\n");
    const out = join(dir, 'timings.tsv');
    execFileSync(
      join(root, 'node_modules/.bin/vitest'),
      ['run', '--root', dir, '--reporter', join(root, 'tools/file-timings.ts')],
      { cwd: dir, env: { ...process.env, SKIFF_FILE_TIMINGS: out }, stdio: 'pipe' },
    );
    const [header, row] = readFileSync(out, 'utf8').trim().split('\n');
    expect(header).toBe('wall_s\trun_s\tcollect_s\tsetup_s\ttests\tend_s\tfile');
    const [wall, run, , , tests, , file] = row!.split('\t');
    expect(file).toBe('slow-hooks.spec.ts');
    expect(tests).toBe('1');
    expect(Number(run)).toBeGreaterThanOrEqual(1.4);
    expect(Number(wall)).toBeGreaterThanOrEqual(Number(run));
  });
});
