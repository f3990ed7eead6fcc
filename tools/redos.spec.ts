// Every regular expression of the repository is checked for catastrophic backtracking (ReDoS)
// with recheck, run on its pure JavaScript backend (no Java, no native binary: forced below).
// recheck decides, by automata theory (or, for what automata cannot model, by fuzzing), how
// a backtracking engine's time grows with the input: linear, polynomial or exponential, and
// gives an attack string.
//
// What counts as a regular expression: every regex literal (`/…/flags`) and every
// `new RegExp(…)` or `RegExp(…)` whose pattern is a string literal (a template without
// substitutions included), read from the TypeScript syntax tree, in the .ts/.mts/.cts files
// under apps/, libs/ and tools/ outside node_modules and generated code (`src/gen/`, checked
// in by `npm run gen:proto` and never edited). A pattern built at run time
// (`new RegExp(variable)`) cannot be checked here: whoever builds one escapes what it holds.
//
// The rule:
//   - source (what runs in the control plane, the agent, the tools): every pattern must be
//     proved linear. A polynomial pattern is a denial of service too (`/\/+$/` is quadratic:
//     a 5 MiB body of slashes is minutes), and so is one the checker cannot decide in time;
//   - test code (`*.spec.ts`, `*.test.ts`, `testing/` folders, libs/testing): it matches the
//     output of our own code, so a polynomial pattern costs a slow test, not an outage; only an
//     exponential one fails (it would hang the suite), and the check gets less time.
// The test fails naming file:line, the pattern and the verdict (with recheck's attack string)
// of each pattern that breaks the rule. A pattern is fixed rather than allowed; only a true
// false positive goes in ALLOWED below, with the reason.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkSync } from 'recheck';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// recheck's synchronous check would otherwise pick a native binary or Java when one is installed.
process.env.RECHECK_SYNC_BACKEND = 'pure';

const root = join(import.meta.dirname, '..');
const FOLDERS = ['apps', 'libs', 'tools'];
const CODE = /\.[cm]?ts$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);

/**
 * Patterns redos-detector flags that cannot backtrack badly, keyed `file:pattern` (not line:
 * an edit above must not move the entry), each with the reason.
 */
const ALLOWED: Record<string, string> = {
  'libs/domain/src/app-name.spec.ts:^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$':
    "swarmkit's own rule, kept on purpose to prove SERVICE_NAME is the same language; run only on names of at most 5 characters",
};

/** Test code, as tools/package-deps.spec.ts names it (libs/testing, a harness, counts here too). */
const isTestCode = (file: string) => /\.(?:spec|test)\.[cm]?ts$/.test(file) || file.split('/').includes('testing');

interface Found {
  file: string;
  line: number;
  pattern: string;
  flags: string;
}

function codeFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (SKIPPED_DIRS.has(entry.name) || (entry.name === 'gen' && dir.endsWith('/src'))) continue;
      codeFiles(path, out);
    } else if (CODE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out;
}

/** The regex literals and literal `RegExp(…)` patterns of one file. */
export function regexesOf(fileName: string, text: string): Omit<Found, 'file'>[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: Omit<Found, 'file'>[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = (node as ts.RegularExpressionLiteral).text;
      const end = literal.lastIndexOf('/');
      found.push({ line: lineOf(node), pattern: literal.slice(1, end), flags: literal.slice(end + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [pattern, flags] = node.arguments ?? [];
      if (pattern && ts.isStringLiteralLike(pattern)) {
        found.push({ line: lineOf(node), pattern: pattern.text, flags: flags && ts.isStringLiteralLike(flags) ? flags.text : '' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

// The same pattern recurs across files (test code repeats what it checks): decided once.
const verdicts = new Map<string, string | null>();

/** Why `found` breaks the rule (see the header), or null when it does not. */
function verdict({ file, pattern, flags }: Found): string | null {
  const test = isTestCode(file);
  const key = `${test}/${flags}/${pattern}`;
  if (!verdicts.has(key)) verdicts.set(key, decide(pattern, flags, test));
  return verdicts.get(key)!;
}

function decide(pattern: string, flags: string, test: boolean): string | null {
  // A product pattern's check took 4.7 s beside a CI run and over 10 s on a busier machine, where
  // it came out undecided and failed the test: a machine's load may slow a verdict, not change it.
  const result = checkSync(pattern, flags, test ? { timeout: 300, checker: 'automaton' } : { timeout: 30_000 });
  if (result.status === 'safe') return null;
  if (result.status === 'unknown') return test ? null : `undecided (${result.error.kind}): write it so that it can be checked`;
  const growth = result.complexity.type === 'polynomial' ? `polynomial (degree ${result.complexity.degree})` : result.complexity.type;
  if (test && result.complexity.type !== 'exponential') return null;
  return `${growth} backtracking, e.g. on ${result.attack.pattern.slice(0, 80)}`;
}

describe('regular expressions (ReDoS)', () => {
  const files = FOLDERS.flatMap((f) => codeFiles(join(root, f)));
  const all: Found[] = files.flatMap((path) => {
    const file = relative(root, path);
    return regexesOf(file, readFileSync(path, 'utf8')).map((r) => ({ file, ...r }));
  });

  it('finds the regular expressions of the repository', () => {
    expect(all.length).toBeGreaterThan(100);
    const own = all.filter((r) => r.file === 'apps/agent/src/docker/engine.ts').map((r) => r.pattern);
    expect(own).toContain('^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$');
    expect(regexesOf('x.ts', "const a = /x+y/g; new RegExp('(a|b)*c', 'i'); RegExp(`q`); new RegExp(dynamic);")).toEqual([
      { line: 1, pattern: 'x+y', flags: 'g' },
      { line: 1, pattern: '(a|b)*c', flags: 'i' },
      { line: 1, pattern: 'q', flags: '' },
    ]);
  });

  it('flags the pattern that froze the agent', () => {
    expect(verdict({ file: 'x.ts', line: 1, pattern: '^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$', flags: '' })).toMatch(/^exponential/);
    expect(verdict({ file: 'x.spec.ts', line: 1, pattern: '^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$', flags: '' })).toMatch(/^exponential/);
    expect(verdict({ file: 'x.ts', line: 1, pattern: '\\/+$', flags: '' })).toMatch(/^polynomial/);
    expect(verdict({ file: 'x.spec.ts', line: 1, pattern: '\\/+$', flags: '' })).toBeNull();
    expect(verdict({ file: 'x.ts', line: 1, pattern: '^[a-zA-Z0-9]+(?:[-_]+[a-zA-Z0-9]+)*$', flags: '' })).toBeNull();
  });

  it('has none that can backtrack catastrophically', { timeout: 300_000 }, () => {
    const vulnerable = all.flatMap((r) => {
      if (`${r.file}:${r.pattern}` in ALLOWED) return [];
      const why = verdict(r);
      return why === null ? [] : [`${r.file}:${r.line}: /${r.pattern}/${r.flags}: ${why}`];
    });
    expect(vulnerable, vulnerable.join('\n')).toEqual([]);
  });

  it('allows only patterns that are still there and still flagged', () => {
    const stale = Object.keys(ALLOWED).filter((key) => {
      const r = all.find((x) => `${x.file}:${x.pattern}` === key);
      return r === undefined || verdict(r) === null;
    });
    expect(stale).toEqual([]);
  });
});
