import { rm } from 'node:fs/promises';
import { contractsByName, type Contract, type Upload } from '@skiff/contracts';
import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { Principal } from '../authz/principal.js';
import { checkAccess } from '../authz/policy.js';
import { DomainError, Invalid, NotImplemented, Unauthorized, statusOf, type Issue } from '../errors.js';
import { type AuditRecorder, audited, remoteAddress } from './audit-trail.js';
import { presentedKey, type PrincipalCache } from './authenticate.js';
import type { AllHandlers, Handler, RequestContext } from './context.js';
import { errorBody, jsonAnswer, unknownFieldsError, validationError } from './envelope.js';
import { type RequestLogger, requestLogger } from './request-logger.js';
import { MAX_JSON_BODY_BYTES, incomingOf, readBodyBytes, readBoundedText } from './body.js';
import { jsonObjectOf } from './json-body.js';
import { tooDeepIssues } from './input-depth.js';
import { inputFromQuery, inputJsonSchema } from './input-shape.js';
import { UNKNOWN_FIELD, unknownFieldIssues } from './unknown-fields.js';
import { unstorableTextIssues } from './storable-text.js';
import { type MultipartBody, type UploadLimits, readMultipart } from './uploads.js';

export interface MountDeps {
  handlers: AllHandlers;
  principals: PrincipalCache;
  log: Logger;
  /** Check every answer against its contract's output schema (tests turn this on). */
  validateOutput?: boolean;
  newRequestId: () => string;
  /** Where operations that take a file (`contract.upload`) receive it; without it they answer NOT_IMPLEMENTED. */
  uploads?: UploadLimits;
  /** Where mutating operations are recorded (done, or refused as FORBIDDEN); none: not recorded. */
  audit?: AuditRecorder;
}

/** Serves every contract at `/api/<router>.<operation>`. */
export function mountApi(app: Hono, deps: MountDeps): void {
  const handlerOf = (c: Contract) =>
    (deps.handlers as Record<string, Record<string, Handler<Contract> | undefined> | undefined>)[c.router]?.[
      c.operation
    ];

  app.all('/api/:operation', async (ctx) => {
    const requestId = ctx.req.header('x-request-id')?.slice(0, 64) || deps.newRequestId();
    const name = ctx.req.param('operation');
    const started = performance.now();
    const log = requestLogger(deps.log, requestId, name);
    const headers: Record<string, string> = { 'x-request-id': requestId };
    let received: MultipartBody | undefined;
    /** Whether the body was read to its end (or there is none): otherwise an answer closes the connection. */
    let bodyDone = ctx.req.method === 'GET' || ctx.req.method === 'HEAD' || ctx.req.header('content-length') === '0';
    let contract: Contract | undefined;
    let principal: Principal | null = null;
    let input: unknown;
    try {
      contract = contractsByName.get(name);
      if (!contract) throw new DomainError('NOT_FOUND', `No operation ${name}`);
      if (contract.method !== ctx.req.method) {
        headers.allow = contract.method;
        throw new DomainError('NOT_FOUND', `No operation ${ctx.req.method} ${name}: ${name} takes ${contract.method}`);
      }
      const key = presentedKey({ get: (h) => ctx.req.header(h) });
      // A `bodyToken` operation takes a key too when one is presented (acceptInvitation: the
      // accepting account); a presented key is always checked, never silently ignored.
      if (contract.access.auth === 'key' || key) {
        if (!key) throw Unauthorized();
        principal = await deps.principals.authenticate(key);
        checkAccess(principal, contract.access, contract.method);
      }
      let raw: unknown;
      const schema = inputJsonSchema(contract.input);
      let unknown: Issue[];
      if (contract.method === 'GET') {
        const query = queryOf(ctx);
        raw = inputFromQuery(contract.input, query);
        unknown = [...new Set(query.keys())].filter((k) => !Object.hasOwn(schema.properties ?? {}, k)).map((k) => ({ path: [k], message: UNKNOWN_FIELD }));
      } else {
        if (contract.upload) raw = (received = await uploadBody(ctx, contract, contract.upload, deps.uploads)).fields;
        else raw = await jsonBody(ctx);
        unknown = unknownFieldIssues(schema, raw);
      }
      bodyDone = true;
      // A query string's input is texts and lists of texts: only a body can nest.
      const tooDeep = contract.method === 'GET' ? [] : tooDeepIssues(raw);
      if (tooDeep.length > 0) throw new DomainError('BAD_REQUEST', `Invalid input data: ${tooDeep[0]!.path.join('.')}: ${tooDeep[0]!.message}`, tooDeep);
      const parsed = contract.input.safeParse(raw);
      if (!parsed.success) throw validationError(parsed.error, raw, schema, unknown);
      if (unknown.length > 0) throw unknownFieldsError(contract.name, unknown);
      const unstorable = unstorableTextIssues(parsed.data);
      if (unstorable.length) throw new DomainError('BAD_REQUEST', `Invalid input data: ${unstorable.map((i) => i.path.join('.')).join(', ')}`, unstorable);
      input = parsed.data;
      if (contract.upload && !received?.file) throw Invalid(contract.upload.field, 'required: a file part of a multipart/form-data body');
      const handler = handlerOf(contract);
      if (!handler) throw NotImplemented(contract.name);
      const context: RequestContext = {
        principal: principal as Principal,
        requestId,
        get log() {
          return log.get();
        },
        upload: received?.file ?? undefined,
      };
      const result = await handler(parsed.data, context);
      if (deps.validateOutput) {
        const check = contract.output.safeParse(result);
        if (!check.success) {
          log.get().error({ issues: check.error.issues }, 'answer does not match the output contract');
          throw new Error(`output of ${contract.name} does not match its contract`);
        }
      }
      await audited(deps.audit, contract, { principal, input, outcome: 'ok', address: remoteAddress(ctx), requestId }, log);
      if (log.enabled('info')) log.get().info({ status: 200, ms: round(performance.now() - started), userId: principal?.userId }, 'request');
      return jsonAnswer(result ?? {}, 200, headers);
    } catch (err) {
      // Authentication and the operation's checks come before the body is read, and a body
      // over its limit is left unread past it: the connection is closed rather than drained.
      if (!bodyDone && !(await drainedSmallBody(ctx))) headers.connection = 'close';
      if (contract && err instanceof DomainError && err.code === 'FORBIDDEN') {
        await audited(deps.audit, contract, { principal, input, outcome: 'forbidden', address: remoteAddress(ctx), requestId }, log);
      }
      return errorResponse(err, log, headers, requestId, started);
    } finally {
      // A service that keeps an uploaded file moves it; whatever is left is removed.
      if (received?.file) await rm(received.file.path, { force: true });
    }
  });
}

/**
 * The input of an operation that takes a file: the text parts of a multipart/form-data body
 * (the file goes to disk), or a JSON body, which carries the fields but never the file.
 */
async function uploadBody(ctx: Context, contract: Contract, upload: Upload, limits: UploadLimits | undefined): Promise<MultipartBody> {
  if (!limits) throw NotImplemented(contract.name);
  const type = ctx.req.header('content-type') ?? '';
  if (/^multipart\/form-data\b/i.test(type)) return readMultipart(ctx.req.raw, upload, limits);
  return { fields: (await jsonBody(ctx)) as Record<string, string>, file: null };
}

/** A refused request's body up to this size is read and dropped, so the client gets the answer (not a reset while it still sends). */
const DRAIN_LIMIT_BYTES = 64 * 1024;
/** …if it arrives within this time: a client trickling it gets its answer then, and the connection closed. */
const DRAIN_DEADLINE_MS = 5_000;

/** Reads and drops an unread body that declares a small length; false when it is bigger, unknown or cut. */
async function drainedSmallBody(ctx: Context): Promise<boolean> {
  const declared = Number(ctx.req.header('content-length'));
  if (!Number.isSafeInteger(declared) || declared < 0 || declared > DRAIN_LIMIT_BYTES || incomingOf(ctx)?.readableDidRead || ctx.req.raw.bodyUsed) return false;
  try {
    await readBoundedText(ctx.req.raw, DRAIN_LIMIT_BYTES, DRAIN_DEADLINE_MS);
    return true;
  } catch {
    return false;
  }
}

function errorResponse(err: unknown, log: RequestLogger, headers: Record<string, string>, requestId: string, started: number): Response {
  const ms = round(performance.now() - started);
  if (err instanceof DomainError) {
    const status = statusOf[err.code];
    if (log.enabled('info')) log.get().info({ status, ms, code: err.code }, 'request');
    return jsonAnswer(errorBody(err.code, requestId, err.message, err.issues), status, headers);
  }
  log.get().error({ err, ms, status: 500 }, 'request failed');
  return jsonAnswer(errorBody('INTERNAL_SERVER_ERROR', requestId), 500, headers);
}

const round = (ms: number) => Math.round(ms * 100) / 100;

function queryOf(ctx: Context): URLSearchParams {
  const url = ctx.req.url;
  const q = url.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
}

/** The JSON object of a request body, read with its limit (body.ts: counted as it arrives; json-body.ts: what it must be). */
async function jsonBody(ctx: Context): Promise<unknown> {
  const bytes = await readBodyBytes(incomingOf(ctx) ?? ctx.req.raw, MAX_JSON_BODY_BYTES, JSON_BODY_DEADLINE_MS);
  return jsonObjectOf(bytes, ctx.req.header('content-encoding'));
}

/** How long a JSON body may take to arrive once its headers did (a slow sender holds no request open past it). */
export const JSON_BODY_DEADLINE_MS = 30_000;
