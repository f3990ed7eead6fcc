// Prints the closing line of a test run, "N passed, N failed", from vitest's JSON report.
// Usage: node tools/test-summary.mjs <report.json> [vitest's exit status]
//
// A failure is a failed test, a test file that failed outside its tests (an import error, a
// failing beforeAll: its tests then show as skipped, not failed), or, when vitest itself
// exited non-zero with nothing of the above (an unhandled error between tests), one more.
import { readFileSync } from 'node:fs';

const [file, vitestStatusText] = process.argv.slice(2);
const vitestStatus = Number(vitestStatusText ?? 0);
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  console.error(`no test report at ${file}`);
  process.exit(1);
}

const files = report.testResults ?? [];
const failedFiles = files.filter(
  (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((t) => t.status === 'failed'),
);
for (const f of failedFiles) {
  console.error(`failed outside its tests: ${f.name}${f.message ? `\n  ${f.message.split('\n')[0]}` : ''}`);
}
let failed = report.numFailedTests + failedFiles.length;
if (failed === 0 && vitestStatus !== 0) {
  console.error(`vitest exited with status ${vitestStatus} although no test failed (an error outside the tests)`);
  failed = 1;
}
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || report.numTotalTests === 0 ? 1 : 0);
