// Fuzzes a running control plane over HTTP; `tools/fuzz` runs it (its header says how).
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runFuzz, summaryLine } from '@skiff/testing/fuzz';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.SKIFF_FUZZ_URL ?? 'http://127.0.0.1:3000' },
    key: { type: 'string', default: process.env.SKIFF_FUZZ_KEY },
    'key-file': { type: 'string', default: process.env.SKIFF_FUZZ_KEY_FILE ?? '.data/initial-api-key' },
    seed: { type: 'string', default: process.env.SKIFF_FUZZ_SEED },
    requests: { type: 'string', default: process.env.SKIFF_FUZZ_REQUESTS ?? '10000' },
    'host-operations': { type: 'boolean', default: false },
  },
});

const fail = (message: string): never => {
  console.error(`fuzz: ${message}`);
  process.exit(2);
};
const keyFile = values['key-file']!;
const key = values.key ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : fail(`no API key: give --key, SKIFF_FUZZ_KEY or a --key-file (${keyFile} is missing)`));
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const requests = Number(values.requests);
if (!Number.isSafeInteger(seed) || seed < 0) fail(`--seed must be a non-negative integer, not ${values.seed}`);
if (!Number.isSafeInteger(requests) || requests < 1) fail(`--requests must be a positive integer, not ${values.requests}`);

console.log(`fuzz: seed ${seed}, ${requests} requests against ${values.url}${values['host-operations'] ? ', host operations included' : ''}`);
const started = Date.now();
const report = await runFuzz({
  send: (request) => fetch(request, { signal: AbortSignal.timeout(60_000) }),
  baseUrl: values.url!,
  apiKey: key,
  seed,
  requests,
  hostOperations: values['host-operations'],
  onProblem: (p) => console.log(`FAIL ${p.problem} ${p.operation} (${p.kind}): status ${p.status}, ${p.why}\n  input: ${p.input}\n  body: ${p.body}`),
});
if (report.skipped.length) console.log(`fuzz: left out (they restart the control plane, or act on hosts: --host-operations includes those): ${report.skipped.join(', ')}`);
const statuses = Object.entries(report.byStatus).map(([s, n]) => `${s}: ${n}`).join(', ');
console.log(`fuzz: ${report.operations} operations in ${Math.round((Date.now() - started) / 1000)} s; by status ${statuses}; ${report.notImplemented} NOT_IMPLEMENTED; seed ${seed}`);
console.log(summaryLine(report));
process.exit(report.serverErrors > 0 || report.nonEnvelope > 0 ? 1 : 0);
