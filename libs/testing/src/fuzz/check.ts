import { type Schema, resolve } from './operations.js';

/** What an answer is: fine, an operation not built (501 in the envelope), or a problem. */
export type Verdict = { ok: true; notImplemented?: boolean } | { ok: false; problem: '5xx' | 'non-envelope'; why: string };

const STATUS_OF: Record<string, number> = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, NOT_IMPLEMENTED: 501, INTERNAL_SERVER_ERROR: 500 };

/**
 * The documented envelope (apps/control-plane/src/http/envelope.ts): success is status 200 with
 * the result as JSON, matching the operation's output schema; an error is `{code, message,
 * issues, requestId}` with the status of its code. NOT_IMPLEMENTED (501) is how an operation not
 * built yet answers: counted apart, not as a server error.
 */
export function judge(status: number, contentType: string | null, text: string, output: Schema): Verdict {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return status >= 500 ? { ok: false, problem: '5xx', why: `status ${status}, not JSON` } : { ok: false, problem: 'non-envelope', why: `status ${status}, not JSON` };
  }
  if (!/^application\/json\b/i.test(contentType ?? '')) return { ok: false, problem: 'non-envelope', why: `content-type ${contentType}` };
  if (status === 200) {
    const wrong = mismatch(body, output, output, '$', 0);
    return wrong ? { ok: false, problem: 'non-envelope', why: `200 but ${wrong}` } : { ok: true };
  }
  const error = errorShape(body);
  if (status === 501 && !error && (body as { code?: unknown }).code === 'NOT_IMPLEMENTED') return { ok: true, notImplemented: true };
  if (status >= 500) return { ok: false, problem: '5xx', why: `status ${status}` };
  if (error) return { ok: false, problem: 'non-envelope', why: `status ${status}: ${error}` };
  const code = (body as { code: string }).code;
  if (STATUS_OF[code] !== status) return { ok: false, problem: 'non-envelope', why: `status ${status} with code ${code}` };
  return { ok: true };
}

/** Why a body is not `{code, message, issues: [{path, message}], requestId}`, or null. */
function errorShape(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body is not an object';
  const b = body as Record<string, unknown>;
  if (typeof b.code !== 'string' || !(b.code in STATUS_OF)) return `unknown code ${JSON.stringify(b.code)}`;
  if (typeof b.message !== 'string') return 'no message';
  if (typeof b.requestId !== 'string') return 'no requestId';
  if (!Array.isArray(b.issues)) return 'no issues';
  for (const issue of b.issues as unknown[]) {
    const i = issue as { path?: unknown; message?: unknown } | null;
    if (!i || !Array.isArray(i.path) || typeof i.message !== 'string') return `an issue is not {path, message}: ${JSON.stringify(issue).slice(0, 100)}`;
  }
  return null;
}

/** Where a value departs from a schema (types, required properties, enums; a few levels deep), or null. */
function mismatch(value: unknown, schema: Schema, root: Schema, at: string, depth: number): string | null {
  if (depth > 6) return null;
  const s = resolve(schema, root);
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return variants.some((v) => mismatch(value, v, root, at, depth + 1) === null) ? null : `${at} matches none of its variants`;
  if (s.enum && !s.enum.some((e) => e === value)) return `${at} is ${JSON.stringify(value)?.slice(0, 40)}, not one of the enum`;
  if (s.type === undefined) return null;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const fits = types.some((t) => t === actual || (t === 'integer' && Number.isInteger(value)));
  if (!fits) return `${at} is ${actual}, not ${types.join('|')}`;
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const key of s.required ?? []) if (!(key in obj)) return `${at}.${key} is missing`;
    for (const [key, prop] of Object.entries(s.properties ?? {})) {
      if (key in obj) {
        const wrong = mismatch(obj[key], prop, root, `${at}.${key}`, depth + 1);
        if (wrong) return wrong;
      }
    }
  }
  if (actual === 'array' && s.items) {
    for (const [i, item] of (value as unknown[]).slice(0, 5).entries()) {
      const wrong = mismatch(item, s.items, root, `${at}[${i}]`, depth + 1);
      if (wrong) return wrong;
    }
  }
  return null;
}
