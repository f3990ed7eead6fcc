// Every workspace package (apps/*, libs/*) declares exactly the packages it imports.
//
// What counts as an import: the module specifiers of static `import … from 'x'` (type-only
// ones too), `import 'x'`, `export … from 'x'`, dynamic `import('x')` with a literal argument,
// `import('x')` types and `import x = require('x')`, read from the TypeScript syntax tree
// (comments and strings do not count). Relative paths, `#` subpath imports and Node builtins
// (`node:x`, or a bare builtin name) are ignored; `@scope/name/deep` counts as `@scope/name`
// and `x/deep` as `x`. A package importing its own name needs no declaration.
//
// Which files: every .ts/.mts/.cts/.js/.mjs/.cjs file of the package outside node_modules.
// Test code is a `*.spec.*` or `*.test.*` file, a file named `test-*` or `*fixture*`, or a
// file in a `testing/`, `test/` or `__tests__/` folder of the package (apps keep their test
// helpers in src/testing/; libs/testing is itself a harness, so its files are source).
// Everything else is source.
//
// The rules:
//   (a) what source imports is in `dependencies` (or `peerDependencies`): it is needed at run
//       time. Only for types (`import type`, `export type`, `import('x')` in a type), like
//       `@types/*`, it may be in `devDependencies` instead: it is needed to check the package,
//       not to run it (libs/testing types its vitest global setup so);
//   (b) every package in `dependencies`, `devDependencies` and `peerDependencies` is imported
//       by some file of the package (tests included); `@types/*` are exempt (never imported);
//   (c) a package in `dependencies` that only test code imports belongs in `devDependencies`;
//   (d) what test code imports is declared by the package (any of the three) or is part of
//       the shared toolchain in the root package.json's `devDependencies` (vitest, …).
// The root package.json declares, in `devDependencies`, what tools/ (scripts, benchmarks,
// these checks) imports; its other entries are programs run from the command line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const CODE = /\.(?:[cm]?ts|tsx|[cm]?js)$/;
const builtins = new Set(builtinModules);

interface ModuleImport {
  specifier: string;
  /** Erased from the emitted JavaScript: `import type`, `export type`, an `import('x')` type. */
  typeOnly: boolean;
}

/** The modules a file imports (see the header for which forms count). */
function moduleImports(fileName: string, text: string): ModuleImport[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: ModuleImport[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push({ specifier: arg.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) {
        found.push({ specifier: arg.literal.text, typeOnly: true });
      }
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const ref = node.moduleReference.expression;
      if (ts.isStringLiteral(ref)) found.push({ specifier: ref.text, typeOnly: node.isTypeOnly });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The package a specifier names, or null for relative paths, subpath imports and builtins. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('#')) return null;
  if (specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  if (builtins.has(specifier) || builtins.has(name)) return null;
  return name;
}

function isTestFile(relPath: string): boolean {
  const parts = relPath.split('/');
  const file = basename(relPath);
  return (
    /\.(?:spec|test)\.[^/]+$/.test(file) ||
    file.startsWith('test-') ||
    file.includes('fixture') ||
    parts.slice(0, -1).some((dir) => dir === 'testing' || dir === 'test' || dir === '__tests__')
  );
}

function codeFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...codeFiles(path));
    else if (entry.isFile() && CODE.test(entry.name)) files.push(path);
  }
  return files;
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/**
 * Where each package is imported from, by package name: source files, the source files that
 * import it at run time (not only for types), and test files.
 */
function importsOf(dir: string, self: string) {
  const source = new Map<string, string[]>();
  const runtime = new Map<string, string[]>();
  const tests = new Map<string, string[]>();
  const add = (into: Map<string, string[]>, name: string, rel: string) => {
    const where = into.get(name) ?? [];
    if (!where.includes(rel)) where.push(rel);
    into.set(name, where);
  };
  for (const file of codeFiles(dir)) {
    const rel = relative(dir, file).split('\\').join('/');
    const test = isTestFile(rel);
    for (const { specifier, typeOnly } of moduleImports(file, readFileSync(file, 'utf8'))) {
      const name = packageOf(specifier);
      if (!name || name === self) continue;
      add(test ? tests : source, name, rel);
      if (!test && !typeOnly) add(runtime, name, rel);
    }
  }
  return { source, runtime, tests };
}

/** What breaks the rules of the header, one line each. */
function problemsOf(dir: string, toolchain: Set<string>): string[] {
  const manifest = readManifest(dir);
  const deps = new Set(Object.keys(manifest.dependencies ?? {}));
  const devDeps = new Set(Object.keys(manifest.devDependencies ?? {}));
  const peers = new Set(Object.keys(manifest.peerDependencies ?? {}));
  const { source, runtime, tests } = importsOf(dir, manifest.name);
  const problems: string[] = [];
  const at = (where: string[]) => where.slice(0, 3).join(', ') + (where.length > 3 ? ', …' : '');

  for (const [name, where] of source) {
    if (deps.has(name) || peers.has(name)) continue;
    if (devDeps.has(name) && !runtime.has(name)) continue;
    const hint = devDeps.has(name) ? ' (it is only in devDependencies)' : '';
    problems.push(`(a) ${name}: imported by ${at(runtime.get(name) ?? where)} but not in dependencies${hint}`);
  }
  for (const name of [...deps, ...devDeps, ...peers]) {
    if (name.startsWith('@types/')) continue;
    if (!source.has(name) && !tests.has(name)) problems.push(`(b) ${name}: declared but never imported`);
    else if (deps.has(name) && !source.has(name)) {
      problems.push(`(c) ${name}: in dependencies but only tests import it (${at(tests.get(name)!)})`);
    }
  }
  for (const [name, where] of tests) {
    if (deps.has(name) || devDeps.has(name) || peers.has(name) || toolchain.has(name)) continue;
    problems.push(`(d) ${name}: imported by ${at(where)} but declared nowhere`);
  }
  return problems.sort();
}

const workspaces = ['apps', 'libs'].flatMap((group) =>
  readdirSync(join(root, group))
    .map((name) => `${group}/${name}`)
    .filter((dir) => existsSync(join(root, dir, 'package.json'))),
);

describe('package dependencies', () => {
  it('reads the import forms the header names', () => {
    const text = [
      "import a from 'alpha';",
      "import type { B } from '@scope/beta/deep/path';",
      "import 'gamma/side-effect';",
      "export * from 'delta';",
      "export { e } from './relative.js';",
      "const f = await import('epsilon');",
      "type G = typeof import('zeta');",
      "import fs from 'node:fs';",
      "import path from 'path';",
      "// import x from 'in-a-comment';",
      "const s = \"import y from 'in-a-string'\";",
    ].join('\n');
    const found = moduleImports('sample.ts', text).flatMap(({ specifier, typeOnly }) => {
      const name = packageOf(specifier);
      return name ? [`${name}${typeOnly ? ' (type)' : ''}`] : [];
    });
    expect(found).toEqual(['alpha', '@scope/beta (type)', 'gamma', 'delta', 'epsilon', 'zeta (type)']);
  });

  it('tells test code from source', () => {
    expect(isTestFile('src/a.spec.ts')).toBe(true);
    expect(isTestFile('src/a.int.test.ts')).toBe(true);
    expect(isTestFile('src/testing/harness.ts')).toBe(true);
    expect(isTestFile('src/compose/test-fixtures.ts')).toBe(true);
    expect(isTestFile('src/global-setup.ts')).toBe(false);
    expect(isTestFile('src/contest.ts')).toBe(false);
  });

  const toolchain = new Set(Object.keys(readManifest(root).devDependencies ?? {}));
  it('the root declares what tools/ imports', () => {
    const { source, tests } = importsOf(join(root, 'tools'), '');
    const imported = [...new Set([...source.keys(), ...tests.keys()])];
    expect(imported.filter((name) => !toolchain.has(name)).sort()).toEqual([]);
  });

  it.each(workspaces)('%s declares exactly what it imports', (dir) => {
    expect(problemsOf(join(root, dir), toolchain)).toEqual([]);
  });
});
