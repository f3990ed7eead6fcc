import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DockerInvalidError } from './errors.js';
import { checkServiceName } from './engine.js';

/**
 * Runs `checkServiceName` on `names` in a child process and answers how long the checks took,
 * or null when the child was still checking after `limitMs` (it is then killed): a
 * catastrophic pattern freezes its thread, so it must not run in the test's own.
 */
function timeChecks(names: string[], limitMs: number): Promise<{ elapsedMs: number; refused: number } | null> {
  const engine = fileURLToPath(new URL('./engine.ts', import.meta.url));
  const script = `
    const { checkServiceName } = await import(${JSON.stringify(engine)});
    const names = ${JSON.stringify(names)};
    const started = performance.now();
    let refused = 0;
    for (const name of names) { try { checkServiceName(name, 'test'); } catch { refused++; } }
    process.stdout.write(JSON.stringify({ elapsedMs: performance.now() - started, refused }));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(null);
      else if (code !== 0) reject(new Error(`the check process failed (${code}): ${err}`));
      else resolve(JSON.parse(out) as { elapsedMs: number; refused: number });
    });
  });
}

describe('checkServiceName', () => {
  it("takes swarmkit's service names and refuses the rest with DockerInvalidError", () => {
    for (const name of ['web', 'shop-web_2', 'a'.repeat(63)]) expect(() => checkServiceName(name, 'inspect service')).not.toThrow();
    for (const name of ['shop.web', '..', '-web', 'web-', '', 'a'.repeat(64), 'a/b']) {
      expect(() => checkServiceName(name, 'inspect service')).toThrow(DockerInvalidError);
    }
  });

  it('answers in linear time on names that make a backtracking pattern explode (ReDoS)', async () => {
    // An AppName may hold dots (the spec), so 'aaa….' reaches the agent. The old pattern,
    // swarmkit's /^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$/, took over a minute on 32 'a' and a dot.
    const names = [32, 40, 62].flatMap((n) => [`${'a'.repeat(n)}.`, `${'a-'.repeat(n / 2)}.`, `${'a_'.repeat(n / 2)}!`]);
    const timed = await timeChecks(names, 10_000);
    expect(timed, 'the check was still running after 10 s: the service-name pattern backtracks').not.toBeNull();
    expect(timed!.refused).toBe(names.length);
    expect(timed!.elapsedMs).toBeLessThan(1000);
  });
});
