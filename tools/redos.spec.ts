// Every regular expression of the repository is checked for catastrophic backtracking (ReDoS)
// with redos-detector (pure JavaScript: it scores how many ways a pattern can match one input,
// so how much a backtracking engine may retry on a failing one).
//
// What counts as a regular expression: every regex literal (`/…/flags`) and every
// `new RegExp(…)` or `RegExp(…)` whose pattern is a string literal (a template without
// substitutions included), read from the TypeScript syntax tree, in the .ts/.mts/.cts files
// under apps/, libs/ and tools/ outside node_modules and generated code (`src/gen/`, checked
// in by `npm run gen:proto` and never edited). Test files count too: they run in CI.
// A pattern built at run time (`new RegExp(variable)`) cannot be checked here: whoever builds
// one escapes what it holds or bounds it.
//
// The test fails naming file:line, the pattern and the detector's verdict for each pattern it
// finds vulnerable. A pattern is fixed rather than allowed; only a true false positive goes in
// ALLOWED below, with the reason.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isSafePattern } from 'redos-detector';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const FOLDERS = ['apps', 'libs', 'tools'];
const CODE = /\.[cm]?ts$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);

/**
 * Patterns redos-detector flags that cannot backtrack badly, keyed `file:pattern` (not line:
 * an edit above must not move the entry), each with the reason.
 */
const ALLOWED: Record<string, string> = {};

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

/** Why the detector finds `found` vulnerable, or null when it does not. */
function verdict({ pattern, flags }: Pick<Found, 'pattern' | 'flags'>): string | null {
  const result = isSafePattern(pattern, {
    caseInsensitive: flags.includes('i'),
    unicode: flags.includes('u') || flags.includes('v'),
    dotAll: flags.includes('s'),
    multiLine: flags.includes('m'),
    maxSteps: 20_000,
    timeout: 2_000,
  });
  if (result.safe) return null;
  const score = result.score.infinite ? 'unbounded' : String(result.score.value);
  const trail = result.trails[0]?.trail.at(-1);
  const where = trail ? ` (ambiguous: ${trail.a.node.source} / ${trail.b.node.source})` : '';
  return `backtracking score ${score}${result.error ? `, ${result.error}` : ''}${where}`;
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
    expect(verdict({ pattern: '^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$', flags: '' })).not.toBeNull();
  });

  it('has none that can backtrack catastrophically', () => {
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
