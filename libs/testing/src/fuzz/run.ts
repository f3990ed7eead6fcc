import { type FuzzCase, makeCase } from './cases.js';
import { judge } from './check.js';
import { IdPool } from './ids.js';
import { type FuzzOperation, operationsOf } from './operations.js';
import { Random } from './random.js';
import { CLEANUP, SETUP_STEPS, firstId } from './setup.js';

/**
 * Operations that act on a machine through its agent (deploying, starting, stopping, backups,
 * the platform host's settings, proxy and cleanups): left out unless `hostOperations` is set,
 * which is for a control plane without an agent, where they only queue commands.
 */
const HOST_OPERATION = /^(?:settings\.(?!read|get)\w+|\w+\.(?:deploy|redeploy|start|stop|reload|rebuild|killBuild|cancelDeployment|dropDeployment|deployTemplate|isolatedDeployment|restartContainer)|backup\.manualBackup\w*)$/;

/** Operations that restart the control plane itself (answered, then it exits for its supervisor): left out unless `restarts` is set. */
const RESTARTS_CONTROL_PLANE = /^settings\.(?:reloadServer|updateServer)$/;

export interface FuzzOptions {
  /** Sends one request (fetch, or an in-process app's `request`). */
  send: (request: Request) => Promise<Response>;
  /** Where the control plane answers, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  apiKey: string;
  seed: number;
  requests: number;
  /** Include the operations that act on hosts (HOST_OPERATION). */
  hostOperations?: boolean;
  /** Include the operations that restart the control plane (RESTARTS_CONTROL_PLANE): for one whose restart does not end it, as in tests. */
  restarts?: boolean;
  /** Called for each failing case as it happens. */
  onProblem?: (problem: FuzzProblem) => void;
}

export interface FuzzProblem {
  operation: string;
  kind: string;
  problem: '5xx' | 'non-envelope';
  input: string;
  status: number;
  body: string;
  why: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  serverErrors: number;
  nonEnvelope: number;
  notImplemented: number;
  byStatus: Record<number, number>;
  problems: FuzzProblem[];
  operations: number;
  skipped: string[];
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const document = (await (await options.send(new Request(`${base}/api/openapi.json`))).json()) as Parameters<typeof operationsOf>[0];
  const all = operationsOf(document);
  const skipped = all.filter((o) => (!options.restarts && RESTARTS_CONTROL_PLANE.test(o.name)) || (!options.hostOperations && HOST_OPERATION.test(o.name))).map((o) => o.name);
  const operations = all.filter((o) => !skipped.includes(o.name));
  const byName = new Map(all.map((o) => [o.name, o]));
  const r = new Random(options.seed);
  const ids = new IdPool();
  const report: FuzzReport = { seed: options.seed, requests: 0, serverErrors: 0, nonEnvelope: 0, notImplemented: 0, byStatus: {}, problems: [], operations: operations.length, skipped };

  const exchange = async (c: FuzzCase, key: string | null = options.apiKey, anchor = false) => {
    const request = requestOf(base, c, key);
    report.requests++;
    let status = 0;
    let text = '';
    let contentType: string | null = null;
    try {
      const res = await options.send(request);
      status = res.status;
      contentType = res.headers.get('content-type');
      text = await res.text();
    } catch (err) {
      text = `no answer: ${(err as Error).message}`;
    }
    report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
    const verdict = status === 0 ? ({ ok: false, problem: 'non-envelope', why: 'no answer' } as const) : judge(status, contentType, text, c.operation.output);
    if (verdict.ok) {
      if (verdict.notImplemented) report.notImplemented++;
      if (status === 200) {
        try {
          ids.learn(JSON.parse(text), anchor);
        } catch {
          // judged already
        }
      }
    } else {
      if (verdict.problem === '5xx') report.serverErrors++;
      else report.nonEnvelope++;
      const problem: FuzzProblem = { operation: c.operation.name, kind: c.kind, problem: verdict.problem, input: abridge(c), status, body: text.slice(0, 300), why: verdict.why };
      report.problems.push(problem);
      options.onProblem?.(problem);
    }
    return status === 200 ? text : null;
  };

  for (const step of SETUP_STEPS) {
    const op = byName.get(step.operation);
    const input = op && step.input(firstId(ids));
    if (!op || !input) continue;
    const text = await exchange(caseOf(op, 'setup', input), options.apiKey, true);
    if (text !== null && step.operation === 'organization.inviteMember') {
      // The invitation's token: accepting it (a valid case of acceptInvitation) makes a new account.
      const token = (JSON.parse(text) as { token?: string }).token;
      if (token) ids.add('token', token, false);
    }
  }

  const per = Math.max(1, Math.floor(options.requests / Math.max(1, operations.length)));
  const order: FuzzOperation[] = [];
  for (let i = 0; i < per; i++) order.push(...operations);
  while (order.length < options.requests) order.push(r.pick(operations));
  for (let i = order.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const op of order) {
    const c = makeCase(op, r, ids);
    const key = r.chance(0.02) ? r.pick(['', 'skf_fuzz', "' OR 1=1 --", 'a'.repeat(10_000), '../../etc/passwd']) : options.apiKey;
    await exchange(key === options.apiKey ? c : { ...c, kind: `${c.kind}, bad key` }, key);
  }

  for (const { field, operation } of CLEANUP) {
    const op = byName.get(operation);
    if (!op) continue;
    for (const id of ids.candidates(field, false)) {
      await options.send(requestOf(base, caseOf(op, 'cleanup', { [field]: id }), options.apiKey)).then((res) => res.text(), () => '');
    }
  }
  return report;
}

function caseOf(op: FuzzOperation, kind: string, input: Record<string, unknown>): FuzzCase {
  return op.method === 'GET' ? { operation: op, kind, query: new URLSearchParams(input as Record<string, string>).toString() } : { operation: op, kind, body: JSON.stringify(input) };
}

function requestOf(base: string, c: FuzzCase, key: string | null): Request {
  const headers: Record<string, string> = {};
  if (key) headers['x-api-key'] = key;
  if (c.operation.method === 'GET') return new Request(`${base}/api/${c.operation.name}${c.query ? `?${c.query}` : ''}`, { headers });
  if (typeof c.body === 'string' || c.body instanceof Uint8Array) headers['content-type'] = 'application/json';
  return new Request(`${base}/api/${c.operation.name}`, { method: 'POST', headers, body: c.body ?? '' });
}

function abridge(c: FuzzCase): string {
  const raw = c.query !== undefined ? `?${c.query}` : typeof c.body === 'string' ? c.body : c.body instanceof Uint8Array ? `<${c.body.length} bytes>` : c.body ? partsOf(c.body) : '';
  return raw.length > 200 ? `${raw.slice(0, 200)}… (${raw.length} chars)` : raw;
}

/** A multipart body in a line: each part's name and value (a file's name and size). */
function partsOf(form: FormData): string {
  const parts = [...form.entries()].map(([name, value]) =>
    typeof value === 'string' ? `${JSON.stringify(name.slice(0, 40))}=${JSON.stringify(value.slice(0, 40))}${value.length > 40 ? `…(${value.length})` : ''}` : `${JSON.stringify(name)}=<file ${JSON.stringify(value.name)}, ${value.size} bytes>`,
  );
  return `multipart ${parts.join(' ')}`;
}

/** The report's last line. */
export function summaryLine(report: FuzzReport): string {
  return `fuzz: ${report.requests} requests, ${report.serverErrors} 5xx, ${report.nonEnvelope} non-envelope`;
}
