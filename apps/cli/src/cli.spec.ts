import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseArgs } from './args.js';
import { sseEvents } from './client.js';
import { mergedEnv } from './declarative/model.js';
import { diffDotenv } from './dotenv.js';
import { fieldsOf, kebab } from './fields.js';
import { human } from './output.js';
import { didYouMean, editDistance, nearest } from './suggest.js';

describe('flags', () => {
  it('maps field names to kebab-case', () => {
    expect(['applicationId', 'healthCheckCluster', 'customGitSSHKeyId', 'name'].map(kebab)).toEqual([
      'application-id',
      'health-check-cluster',
      'custom-git-ssh-key-id',
      'name',
    ]);
  });

  it('reads kinds, requiredness and descriptions from the schema', () => {
    const fields = fieldsOf(z.object({ n: z.number().int(), tags: z.array(z.string()).nullable().optional(), on: z.boolean().describe('switch'), spec: z.object({ a: z.string() }) }));
    expect(fields.map(({ name, kind, items, required, nullable }) => ({ name, kind, items, required, nullable }))).toEqual([
      { name: 'n', kind: 'number', items: undefined, required: true, nullable: false },
      { name: 'tags', kind: 'array', items: 'string', required: false, nullable: true },
      { name: 'on', kind: 'boolean', items: undefined, required: true, nullable: false },
      { name: 'spec', kind: 'json', items: undefined, required: true, nullable: false },
    ]);
    expect(fields[2]!.description).toBe('switch');
  });

  it('splits argv: values, =values, booleans with or without a value, aliases, --', () => {
    const args = parseArgs(['--a', '1', '--b=2', '--on', '--off', 'false', '-f', 'pos', '--', '--not-a-flag'], { booleans: new Set(['on', 'off', 'follow']), aliases: { f: 'follow' } });
    expect(Object.fromEntries(args.options)).toEqual({ a: ['1'], b: ['2'], on: [true], off: ['false'], follow: [true] });
    expect(args.positionals).toEqual(['pos', '--not-a-flag']);
    expect(() => parseArgs(['--a'], { booleans: new Set() })).toThrow('--a needs a value');
  });
});

describe('dotenv', () => {
  it('names what changes, never the values', () => {
    expect(diffDotenv('A=1\nB=2\n# c\nC=3', 'A=1\nB=9\nD=4')).toEqual([
      { key: 'B', change: 'changed' },
      { key: 'D', change: 'added' },
      { key: 'C', change: 'removed' },
    ]);
  });

  it("merges the file's values: null keeps the platform's, unnamed keys stay", () => {
    expect(mergedEnv('A=1\nSECRET=s\nKEEP=k', { A: '2', SECRET: null, NEW: 'n', MISSING: null })).toEqual({
      text: 'A=2\nSECRET=s\nKEEP=k\nNEW=n',
      kept: ['KEEP'],
      unset: ['MISSING'],
    });
  });
});

describe('server-sent events', () => {
  it('parses events split across chunks, with CRLF and comments', async () => {
    const chunks = [': hello\r\nevent: line\r\ndata: {"te', 'xt":"a"}\r\n\r\nevent: end\ndata: {}\n\n'];
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
        c.close();
      },
    });
    const events = [];
    for await (const e of sseEvents(body)) events.push(e);
    expect(events).toEqual([
      { event: 'line', data: '{"text":"a"}' },
      { event: 'end', data: '{}' },
    ]);
  });
});

describe('suggestions', () => {
  it('names the nearest commands by edit distance, nothing when none is near', () => {
    expect(editDistance('projcet', 'project')).toBe(2);
    expect(editDistance('', 'abc')).toBe(3);
    expect(nearest('projcet', ['project', 'environment', 'deploy'])).toEqual(['project']);
    expect(nearest('dropDeploymnt', ['deploy', 'dropDeployment', 'redeploy'])).toEqual(['dropDeployment']);
    expect(nearest('envi', ['env', 'environment'])).toEqual(['env', 'environment']);
    expect(nearest('zzzzzz', ['project', 'env'])).toEqual([]);
    expect(didYouMean('statsu', ['status', 'stop'])).toBe('; did you mean "status"?');
  });
});

describe('tables', () => {
  it("show a backup file's key whole, the value backup.restore takes", () => {
    const key = 'shop-db/nightly/bkp_0123456789abcdef0123/2026-12-11T06-00-00.000Z.dump.gz';
    const text = human({ color: false }, [{ key, name: '2026-12-11T06-00-00.000Z.dump.gz', size: 2048, lastModified: '2026-12-11T06:00:01.000Z' }]);
    expect(text.split('\n')[0]).toMatch(/^KEY\s+NAME\s+SIZE\s+LASTMODIFIED$/);
    expect(text).toContain(key);
  });
});

