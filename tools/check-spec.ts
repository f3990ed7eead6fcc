// Checks the operation list the tests hold the contracts to (libs/contracts/spec-operations.txt)
// against the API contract document, shared/spec/api.md beside the repository.
//   npx tsx tools/check-spec.ts [path to api.md]          compare; exit 1 on any difference
//   npx tsx tools/check-spec.ts [path to api.md] --write   rewrite the list from the document
// .ci/run runs it when the document is there; the test suite itself reads only the repository.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const write = args.includes('--write');
const specPath = args.find((a) => a !== '--write') ?? fileURLToPath(new URL('../../shared/spec/api.md', import.meta.url));
const listPath = fileURLToPath(new URL('../libs/contracts/spec-operations.txt', import.meta.url));

/** Every `METHOD router.operation` the document lists, expanding "op, op2, op3" lists. */
function documentOperations(text: string): string[] {
  const ops: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^- (GET|POST) \/([A-Za-z]+)\.([A-Za-z, ]+?)(?::|$)/.exec(line);
    if (!m) continue;
    const [, method, router, list] = m;
    for (const op of list!.split(',').map((s) => s.trim()).filter(Boolean)) ops.push(`${method} ${router}.${op}`);
  }
  return ops;
}

if (!existsSync(specPath)) {
  console.error(`check-spec: no API document at ${specPath}`);
  process.exit(2);
}
const fromDocument = documentOperations(readFileSync(specPath, 'utf8'));
if (fromDocument.length === 0) {
  console.error(`check-spec: ${specPath} lists no operation`);
  process.exit(1);
}
const header = '# The operations of shared/spec/api.md, "METHOD router.operation", in its order.\n# Written by `npx tsx tools/check-spec.ts --write`; checked against the document by .ci/run.\n';
if (write) {
  writeFileSync(listPath, header + fromDocument.join('\n') + '\n');
  console.log(`check-spec: wrote ${fromDocument.length} operations to libs/contracts/spec-operations.txt`);
  process.exit(0);
}
const inRepo = readFileSync(listPath, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
const missing = fromDocument.filter((o) => !inRepo.includes(o));
const extra = inRepo.filter((o) => !fromDocument.includes(o));
for (const o of missing) console.error(`check-spec: the document lists ${o}; spec-operations.txt does not`);
for (const o of extra) console.error(`check-spec: spec-operations.txt lists ${o}; the document does not`);
console.log(`check-spec: ${fromDocument.length} operations in the document, ${missing.length + extra.length} differences`);
process.exit(missing.length + extra.length ? 1 : 0);
