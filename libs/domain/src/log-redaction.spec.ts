// The redaction list covers every field the agent protocol comments as a secret and every
// write-only field of the contracts (answered as `has<Name>`).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REDACTED, SECRET_LOG_FIELDS, redactSecrets } from './log-redaction.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const camel = (snake: string) => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const files = (dir: string, ext: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), ext) : e.name.endsWith(ext) ? [join(dir, e.name)] : [],
  );

describe('the log redaction list', () => {
  it('names every proto field commented as a secret', () => {
    const secretFields: string[] = [];
    for (const file of files(join(ROOT, 'proto'), '.proto')) {
      let comment = '';
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const text = line.trim();
        if (text.startsWith('//')) {
          comment += ` ${text}`;
          continue;
        }
        const field = /^(?:repeated\s+)?[\w.<>, ]+\s+(\w+)\s*=\s*\d+/.exec(text);
        if (field && /\bsecrets?\b|never log/i.test(comment)) secretFields.push(camel(field[1]!));
        comment = '';
      }
    }
    expect(secretFields.length).toBeGreaterThan(5);
    expect(secretFields.filter((f) => !SECRET_LOG_FIELDS.includes(f))).toEqual([]);
  });

  it('names every write-only field of the contracts', () => {
    const writeOnly = new Set<string>();
    for (const file of files(join(ROOT, 'libs/contracts/src'), '.ts')) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bhas([A-Z]\w*)\s*:/g)) {
        writeOnly.add(m[1]!.charAt(0).toLowerCase() + m[1]!.slice(1));
      }
    }
    // has<Name> fields that say whether something exists, not that a secret is kept.
    const notSecrets = new Set(['accessToProject']);
    const missing = [...writeOnly].filter((f) => !notSecrets.has(f) && !SECRET_LOG_FIELDS.some((s) => s.toLowerCase() === f.toLowerCase()));
    expect(writeOnly.size).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it('finds each field at the top and four objects or arrays deep, in any case, and copies only what it changes', () => {
    const deep = { a: { b: { c: { password: 'p4', other: 1 } } } };
    const tooDeep = { a: { b: { c: { d: { password: 'p5' } } } } };
    const error = new Error('x');
    const input = { token: 't', headers: { 'x-api-key': 'k', Authorization: 'b' }, list: [{ secretKey: 's' }], deep, tooDeep, err: error, kept: { name: 'n' } };
    const out = redactSecrets(input);
    expect(out.token).toBe(REDACTED);
    expect(out.headers).toEqual({ 'x-api-key': REDACTED, Authorization: REDACTED });
    expect(out.list).toEqual([{ secretKey: REDACTED }]);
    expect(out.deep.a.b.c).toEqual({ password: REDACTED, other: 1 });
    expect(out.tooDeep).toBe(tooDeep);
    expect(out.err).toBe(error);
    expect(out.kept).toBe(input.kept);
    expect(input.token).toBe('t');
    expect(redactSecrets(input.kept)).toBe(input.kept);
  });
});
