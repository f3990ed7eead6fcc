import { LogQueries } from '@skiff/contracts';
import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Logger } from 'pino';
import { checkAccess } from '../authz/policy.js';
import type { Principal } from '../authz/principal.js';
import { DomainError, Invalid, statusOf, Unauthorized } from '../errors.js';
import type { LogEvent } from '../services/containers/index.js';
import { presentedKey, type PrincipalCache } from './authenticate.js';
import { errorBody, validationError } from './envelope.js';

type Route = keyof typeof LogQueries;

export interface LogRoutes {
  open(route: Route, principal: Principal, query: unknown, signal: AbortSignal): Promise<AsyncGenerator<LogEvent>>;
}

/**
 * `GET /api/logs.service`, `/api/logs.container`, `/api/logs.deployment` (beyond the spec):
 * server-sent events `line` ({stream, text}) and a last `end` ({reason}). Authentication,
 * the query and every access check come first, answered as operations answer them; once the
 * stream runs, the client going away aborts it (and the agent stops reading the log).
 */
export function mountLogs(app: Hono, routes: LogRoutes, deps: { principals: PrincipalCache; log: Logger; newRequestId: () => string }): void {
  for (const route of Object.keys(LogQueries) as Route[]) {
    app.get(`/api/logs.${route}`, async (c) => {
      const requestId = c.req.header('x-request-id')?.slice(0, 64) || deps.newRequestId();
      const log = deps.log.child({ requestId, route: `logs.${route}` });
      c.header('x-request-id', requestId);
      const aborter = new AbortController();
      let events: AsyncGenerator<LogEvent>;
      try {
        const key = presentedKey({ get: (h) => c.req.header(h) });
        if (!key) throw Unauthorized();
        const principal = await deps.principals.authenticate(key);
        checkAccess(principal, {}, 'GET');
        events = await routes.open(route, principal, parsedQuery(c, route), aborter.signal);
      } catch (err) {
        return errorResponse(c, err, log, requestId);
      }
      log.info({ status: 200 }, 'log stream opened');
      return streamSSE(c, async (stream) => {
        stream.onAbort(() => aborter.abort());
        try {
          for await (const event of events) {
            if (event.type === 'line') await stream.writeSSE({ event: 'line', data: JSON.stringify({ stream: event.stream, text: event.text }) });
            else await stream.writeSSE({ event: 'end', data: JSON.stringify({ reason: event.reason }) });
            if (aborter.signal.aborted) break;
          }
        } catch (err) {
          log.error({ err }, 'log stream failed');
          await stream.writeSSE({ event: 'end', data: JSON.stringify({ reason: 'the stream failed' }) }).catch(() => {});
        } finally {
          aborter.abort();
          await events.return(undefined);
          log.info('log stream closed');
        }
      });
    });
  }
}

function parsedQuery(c: Context, route: Route): unknown {
  const url = c.req.url;
  const at = url.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
  const raw: Record<string, string> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    if (values.length > 1) throw Invalid(key, 'given more than once');
    raw[key] = values[0]!;
  }
  const parsed = LogQueries[route].safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error, raw);
  return parsed.data;
}

function errorResponse(c: Context, err: unknown, log: Logger, requestId: string) {
  if (err instanceof DomainError) {
    log.info({ status: statusOf[err.code], code: err.code }, 'log stream refused');
    return c.json(errorBody(err.code, requestId, err.message, err.issues), statusOf[err.code]);
  }
  log.error({ err }, 'log stream failed');
  return c.json(errorBody('INTERNAL_SERVER_ERROR', requestId), 500);
}
