// Keeps what the README and docs/ state about the repository true: the
// operations beyond the spec the README lists, and the paths both name.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allContracts, contractsByName } from '@skiff/contracts';
import { inputJsonSchema } from '../apps/control-plane/src/http/input-shape.js';
import { unknownFieldIssues } from '../apps/control-plane/src/http/unknown-fields.js';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const specOperations = new Set(
  readFileSync(`${root}libs/contracts/spec-operations.txt`, 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(' ')[1]),
);

describe('README.md', () => {
  it('names every operation beyond the spec', () => {
    const beyond = allContracts.map((c) => c.name).filter((name) => !specOperations.has(name));
    expect(beyond.length).toBeGreaterThan(0);
    expect(beyond.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('names only paths of the repository that exist', () => {
    expect(missingPaths(readme)).toEqual([]);
  });

  it("sends, in its walkthroughs, inputs each operation takes: the fields its contract names, nothing else", () => {
    const calls = postedInputs(readme);
    expect(calls.length).toBeGreaterThan(20);
    const wrong = calls.flatMap(({ operation, json }) => {
      const contract = contractsByName.get(operation);
      if (!contract) return [`${operation}: no such operation`];
      let input: unknown;
      try {
        input = JSON.parse(json);
      } catch {
        return [`${operation}: not JSON: ${json}`];
      }
      const unknown = unknownFieldIssues(inputJsonSchema(contract.input), input).map((i) => `${operation}: unknown field ${i.path.join('.')}`);
      const parsed = contract.input.safeParse(input);
      return [...unknown, ...(parsed.success ? [] : [`${operation}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`])];
    });
    expect(wrong).toEqual([]);
  });
});

/**
 * The `post <operation> '<json>'` calls of the README's shell blocks, the JSON with each
 * spliced shell variable (`"'$APP'"`) read as a placeholder id.
 */
function postedInputs(text: string): Array<{ operation: string; json: string }> {
  const calls: Array<{ operation: string; json: string }> = [];
  for (const m of text.matchAll(/\bpost ([a-zA-Z]+\.[a-zA-Z]+) '/g)) {
    let json = '';
    let i = m.index! + m[0].length;
    // Up to the quote that ends the argument: one not followed by `$NAME'` (a splice).
    for (;;) {
      const end = text.indexOf("'", i);
      if (end < 0) break;
      const splice = /^'\$[A-Z_]+'/.exec(text.slice(end));
      if (splice) {
        json += `${text.slice(i, end)}placeholder_id`;
        i = end + splice[0].length;
        continue;
      }
      json += text.slice(i, end);
      break;
    }
    calls.push({ operation: m[1]!, json });
  }
  return calls;
}

describe.each(['docs/architecture.md', 'docs/security.md'])('%s', (doc) => {
  it('names only paths of the repository that exist', () => {
    expect(missingPaths(readFileSync(`${root}${doc}`, 'utf8'))).toEqual([]);
  });
});

/** The repository paths a document names in backticks (`apps/…`, `libs/…`…) that do not exist. */
function missingPaths(text: string): string[] {
  const paths = [...text.matchAll(/`((?:apps|libs|tools|docs|proto)\/[^`\s]*)`/g)].map((m) => m[1]!);
  expect(paths.length).toBeGreaterThan(0);
  return paths.filter((p) => !existsSync(`${root}${p.replace(/[<*].*$/, '')}`));
}
