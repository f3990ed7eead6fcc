import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectedFragments, mismatch, parseBlock, parseSteps, walkthroughSections } from './lib/readme-walkthrough.js';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

describe('the README walkthrough parser', () => {
  it('cuts a block into steps: code, then the comment lines right below it as its output', () => {
    const steps = parseSteps([
      '# explains, not output',
      'A=$(post x.y \'{"a":1,',
      '  "b":2}\')',
      'curl -s $SKIFF/x',
      '# {"a":1,...}',
      '#  "b":2}',
      '',
      '# explains again',
      'echo done   # a trailing remark',
      '',
      'echo last',
    ]);
    expect(steps).toEqual([
      { code: 'A=$(post x.y \'{"a":1,\n  "b":2}\')\ncurl -s $SKIFF/x', expected: ['{"a":1,...}', ' "b":2}'] },
      { code: 'echo done   # a trailing remark\n\necho last', expected: [] },
    ]);
  });

  it('reads a tools/up line as a restart with its variables', () => {
    expect(parseBlock(['SKIFF_HOST=0.0.0.0 SKIFF_PROXY_HTTP_PORT=18090 tools/up'])).toEqual({
      kind: 'up',
      env: { SKIFF_HOST: '0.0.0.0', SKIFF_PROXY_HTTP_PORT: '18090' },
      line: 'SKIFF_HOST=0.0.0.0 SKIFF_PROXY_HTTP_PORT=18090 tools/up',
    });
    expect(parseBlock(['tools/up'])).toMatchObject({ kind: 'up', env: {} });
    expect(parseBlock(['tools/up --help', 'echo'])).toMatchObject({ kind: 'run' });
  });

  it('finds the README sections from "Deploy a sample application" on, with the skipped blocks marked', () => {
    const sections = walkthroughSections(readme);
    expect(sections[0]!.title).toBe('Deploy a sample application');
    expect(sections.map((s) => s.title)).toContain('Deploy a compose stack');
    const skipped = sections.flatMap((s) => s.blocks).filter((b) => b.kind === 'skip');
    expect(skipped.every((b) => b.kind === 'skip' && b.reason.length > 10)).toBe(true);
    const ups = sections.flatMap((s) => s.blocks).filter((b) => b.kind === 'up');
    expect(ups.map((b) => b.kind === 'up' && b.env.SKIFF_OUTBOUND_ALLOW_PRIVATE)).toContain('1');
  });
});

describe('a step checked against what the README shows', () => {
  const step = (expected: string[]) => ({ code: 'x', expected });

  it('ignores ids, timestamps, keys and elisions; matches the fixed pieces in order, whitespace squeezed', () => {
    expect(expectedFragments(['{"id":"app_9288iiezop3n8oks",...,"at":"2026-11-22T23:29:05.754Z"}'])).toEqual(['{"id":"', '",', ',"at":"', '"}']);
    const output = '{"id":"app_0000000000000000","x":1,"at":"2027-01-01T00:00:00.000Z"}\n';
    expect(mismatch(step(['{"id":"app_9288iiezop3n8oks",...,"at":"2026-11-22T23:29:05.754Z"}']), output, 0)).toBeNull();
    expect(mismatch(step(['DRIVER    VOLUME NAME']), 'DRIVER VOLUME NAME\n', 0)).toBeNull();
  });

  it('fails on output the README does not show, on a wrong order, and on a hidden API error', () => {
    expect(mismatch(step(['hello from skiff']), 'hello from the shop\n', 0)).toMatch(/lacks "hello from skiff"/);
    expect(mismatch(step(['b', 'a']), 'a\nb\n', 0)).toMatch(/lacks "a"/);
    expect(mismatch(step([]), 'oops\n', 1)).toMatch(/status 1/);
    expect(mismatch(step([]), '{"code":"BAD_REQUEST","message":"Invalid input data: name"}\n', 0)).toMatch(/API error/);
    expect(mismatch(step(['{"code":"BAD_REQUEST",...}']), '{"code":"BAD_REQUEST","message":"x"}', 0)).toBeNull();
    // A step with shown output is judged by it, whatever its status (`timeout 1 cat` ends 124).
    expect(mismatch(step(['+PONG']), '+PONG\r\n', 124)).toBeNull();
  });
});
