// Prints the closing line of a test run, "N passed, N failed", from vitest's JSON report.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  console.error(`no test report at ${file}`);
  process.exit(1);
}
const failed = report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0);
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || report.numTotalTests === 0 ? 1 : 0);
