import type { z } from 'zod';
import { DomainError, type ErrorCode, type Issue } from '../errors.js';
import type { JsonSchema } from './input-shape.js';
import { UNKNOWN_FIELD, fieldAllowsNull } from './unknown-fields.js';

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  issues: Issue[];
  requestId: string;
}

const defaultMessage: Record<ErrorCode, string> = {
  BAD_REQUEST: 'Invalid input data',
  UNAUTHORIZED: 'Authorization not provided',
  FORBIDDEN: 'Insufficient access',
  NOT_FOUND: 'Not found',
  NOT_IMPLEMENTED: 'Not implemented',
  INTERNAL_SERVER_ERROR: 'Internal server error',
};

export function errorBody(code: ErrorCode, requestId: string, message?: string, issues: Issue[] = []): ErrorBody {
  return { code, message: message ?? defaultMessage[code], issues, requestId };
}

/**
 * BAD_REQUEST for an input its contract refused, each issue naming its field: a field that
 * was not sent says `required` (and, when it may be null, that null means none) rather than
 * zod's `expected string, received undefined`; `extra` issues (unknown fields) join them.
 */
export function validationError(error: z.ZodError, raw?: unknown, schema?: JsonSchema, extra: Issue[] = []): DomainError {
  const issues: Issue[] = error.issues.flatMap((i) => {
    const path = i.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    // A strict object's own refusal, one issue per key as unknown-fields.ts words it.
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ path: [...path, k], message: UNKNOWN_FIELD })).filter((u) => !extra.some((e) => e.path.join('.') === u.path.join('.')));
    const missing = i.code === 'invalid_type' && path.length > 0 && raw !== undefined && valueAt(raw, path) === undefined;
    if (!missing) return { path, message: i.message };
    return { path, message: schema && fieldAllowsNull(schema, path) ? 'required (send null for none)' : 'required' };
  });
  issues.push(...extra);
  const fields = [...new Set(issues.map((i) => i.path.join('.') || '(body)'))].join(', ');
  return new DomainError('BAD_REQUEST', `Invalid input data: ${fields}`, issues);
}

/** Fields the operation does not take, named (unknown-fields.ts). */
export function unknownFieldsError(operation: string, issues: Issue[]): DomainError {
  const fields = issues.map((i) => i.path.join('.')).join(', ');
  return new DomainError('BAD_REQUEST', `Invalid input data: ${fields}: unknown field${issues.length > 1 ? 's' : ''} (${operation} does not take ${issues.length > 1 ? 'them' : 'it'})`, issues);
}

function valueAt(value: unknown, path: ReadonlyArray<string | number>): unknown {
  let v = value;
  for (const part of path) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string | number, unknown>)[part];
  }
  return v;
}

/**
 * A JSON answer whose headers stay a plain record: Hono's `ctx.header` and `ctx.json` with more
 * than one header build a `Headers` object (every call checked by undici), which the node server
 * then copies back into a record to write.
 */
export function jsonAnswer(body: unknown, status: number, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}
