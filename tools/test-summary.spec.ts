import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./test-summary.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'skiff-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type FileResult = { name: string; status: 'passed' | 'failed'; message?: string; assertionResults: { status: string }[] };

function summary(files: FileResult[], vitestStatus = 0): { line: string; status: number } {
  const tests = files.flatMap((f) => f.assertionResults);
  const count = (s: string) => tests.filter((t) => t.status === s).length;
  const report = {
    numTotalTests: tests.length,
    numPassedTests: count('passed'),
    numFailedTests: count('failed'),
    numPendingTests: count('skipped'),
    numTodoTests: 0,
    testResults: files,
  };
  const file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(report));
  try {
    const out = execFileSync(process.execPath, [script, file, String(vitestStatus)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { line: out.trim(), status: 0 };
  } catch (err) {
    const e = err as { stdout: string; status: number };
    return { line: e.stdout.trim(), status: e.status };
  }
}

const ok = (name: string, n = 2): FileResult => ({ name, status: 'passed', assertionResults: Array.from({ length: n }, () => ({ status: 'passed' })) });

describe('tools/test-summary.mjs', () => {
  it('passes a run where every test passed', () => {
    expect(summary([ok('a'), ok('b', 3)])).toEqual({ line: '5 passed, 0 failed', status: 0 });
  });

  it('counts failed tests', () => {
    const bad: FileResult = { name: 'c', status: 'failed', assertionResults: [{ status: 'passed' }, { status: 'failed' }] };
    expect(summary([ok('a'), bad], 1)).toEqual({ line: '3 passed, 1 failed', status: 1 });
  });

  it('counts a file that failed outside its tests (its tests show as skipped)', () => {
    const setupFailed: FileResult = { name: 'd', status: 'failed', message: 'beforeAll failed', assertionResults: [{ status: 'skipped' }, { status: 'skipped' }] };
    expect(summary([ok('a'), setupFailed], 1)).toEqual({ line: '2 passed, 1 failed, 2 skipped', status: 1 });
  });

  it('counts an error outside every test when vitest failed with nothing else failed', () => {
    expect(summary([ok('a')], 1)).toEqual({ line: '2 passed, 1 failed', status: 1 });
  });

  it('fails a run that ran no test', () => {
    expect(summary([]).status).toBe(1);
  });
});
