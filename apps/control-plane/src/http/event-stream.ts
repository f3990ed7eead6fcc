import { WakeableSleep } from '@skiff/domain';
import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Logger } from 'pino';
import { checkAccess } from '../authz/policy.js';
import type { Principal } from '../authz/principal.js';
import { DomainError, Forbidden, Invalid, statusOf } from '../errors.js';
import type { EventSignal } from '../services/events/events.js';
import { type EventService, eventJson } from '../services/events/event-service.js';
import { presentedKey, type PrincipalCache } from './authenticate.js';
import { errorBody } from './envelope.js';

export interface EventStreamDeps {
  events: EventService;
  signal: EventSignal;
  principals: PrincipalCache;
  log: Logger;
  newRequestId: () => string;
  /** A comment line this often, when the key is checked again (removed or expired: the stream ends); 15 s. */
  heartbeatMs?: number;
  /** Events committed by another process are found this often; 2 s. */
  pollMs?: number;
  /** Open streams per API key; 5. */
  maxStreamsPerKey?: number;
}

const EVENT_ID = /^\d{1,18}$/;

/**
 * `GET /api/events`: the organization's events as server-sent events (`id:` the event id,
 * `event:` its kind, `data:` its JSON), only those the caller may see (policy.ts
 * canSeeEvent). Authenticated as the API is; `Last-Event-ID` (or `?lastEventId=`) resumes
 * after that event; without it the stream starts with the next event. When retention
 * (SKIFF_EVENT_RETENTION_DAYS) deleted events after the given id, the first message is an
 * `event: pruned` without an `id:` (EventSource keeps its last id), and the stream goes on
 * with the oldest event kept.
 */
export function mountEventStream(app: Hono, deps: EventStreamDeps): void {
  const open = new Map<string, number>();
  const max = deps.maxStreamsPerKey ?? 5;

  app.get('/api/events', async (ctx) => {
    const requestId = ctx.req.header('x-request-id')?.slice(0, 64) || deps.newRequestId();
    const log = deps.log.child({ requestId, operation: 'events' });
    ctx.header('x-request-id', requestId);
    let principal: Principal;
    let key: string;
    let after: string;
    let resumed = false;
    try {
      const presented = presentedKey({ get: (h) => ctx.req.header(h) });
      if (!presented) throw new DomainError('UNAUTHORIZED', 'Authorization not provided');
      key = presented;
      principal = await deps.principals.authenticate(key);
      checkAccess(principal, {}, 'GET');
      const fromHeader = ctx.req.header('last-event-id');
      const fromQuery = ctx.req.query('lastEventId');
      const given = fromHeader ?? fromQuery;
      if (given !== undefined && !EVENT_ID.test(given.trim())) {
        throw Invalid(fromHeader !== undefined ? 'Last-Event-ID' : 'lastEventId', 'must be an event id (a whole number)');
      }
      const unknown = [...new URL(ctx.req.url).searchParams.keys()].filter((k) => k !== 'lastEventId');
      if (unknown.length > 0) throw Invalid(unknown[0]!, 'unknown field');
      if ((open.get(principal.apiKeyId) ?? 0) >= max) throw Forbidden(`At most ${max} event streams may be open per API key`);
      resumed = given !== undefined;
      after = given !== undefined ? given.trim() : await deps.events.latestId(principal.organizationId);
    } catch (err) {
      return errorAnswer(ctx, err, log, requestId);
    }
    const keyId = principal.apiKeyId;
    open.set(keyId, (open.get(keyId) ?? 0) + 1);
    log.info({ userId: principal.userId, after }, 'event stream opened');
    ctx.header('cache-control', 'no-cache');
    ctx.header('x-accel-buffering', 'no');
    return streamSSE(ctx, async (stream) => {
      const sleeper = new WakeableSleep();
      let woken = false;
      const unsubscribe = deps.signal.subscribe(() => {
        woken = true;
        sleeper.wake();
      });
      stream.onAbort(() => sleeper.wake());
      const heartbeatMs = deps.heartbeatMs ?? 15_000;
      let beatAt = Date.now() + heartbeatMs;
      try {
        await stream.write(': connected\n\n');
        if (resumed) {
          const gap = await deps.events.resumeGap(principal.organizationId, after);
          if (gap) {
            const data = { lastEventId: after, prunedThrough: gap.prunedThrough, resumesWith: gap.oldestKept, message: 'events after lastEventId were deleted by retention; the stream goes on with the oldest kept' };
            await stream.writeSSE({ event: 'pruned', data: JSON.stringify(data) });
          }
        }
        while (!stream.aborted && !stream.closed) {
          woken = false;
          for (;;) {
            const page = await deps.events.after(principal, after);
            for (const e of page.events) await stream.writeSSE({ id: e.id, event: e.kind, data: JSON.stringify(eventJson(e)) });
            after = page.next;
            if (page.read < 200 || stream.aborted) break;
          }
          if (Date.now() >= beatAt) {
            const current = await deps.principals.resolve(key);
            if (!current || (current.expiresAt && current.expiresAt.getTime() <= Date.now()) || current.apiKeyId !== keyId) {
              await stream.write(': the API key was removed or expired\n\n');
              break;
            }
            principal = current;
            await stream.write(': heartbeat\n\n');
            beatAt = Date.now() + heartbeatMs;
          }
          if (!woken) await sleeper.sleep(Math.max(0, Math.min(deps.pollMs ?? 2000, beatAt - Date.now())));
        }
      } catch (err) {
        if (!stream.aborted) log.warn({ err: err instanceof Error ? err.message : String(err) }, 'event stream ended by an error');
      } finally {
        unsubscribe();
        const left = (open.get(keyId) ?? 1) - 1;
        if (left > 0) open.set(keyId, left);
        else open.delete(keyId);
        log.info('event stream closed');
      }
    });
  });
}

function errorAnswer(ctx: Context, err: unknown, log: Logger, requestId: string) {
  if (err instanceof DomainError) {
    log.info({ code: err.code }, 'event stream refused');
    return ctx.json(errorBody(err.code, requestId, err.message, err.issues), statusOf[err.code]);
  }
  log.error({ err }, 'event stream failed');
  return ctx.json(errorBody('INTERNAL_SERVER_ERROR', requestId), 500);
}
