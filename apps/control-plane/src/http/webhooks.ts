import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { DomainError, statusOf } from '../errors.js';
import type { ForgeSource, WebhookReceiver } from '../services/webhooks/index.js';
import { BodyTooSlow, readBoundedText } from './body.js';
import { errorBody } from './envelope.js';

/** The most a webhook delivery may hold (Stripe's events are a few kilobytes). */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

/** The most a push or pull-request delivery may hold (GitHub lists at most 20 commits in one). */
export const MAX_PUSH_WEBHOOK_BYTES = 1024 * 1024;

/** How long a webhook's body may take to arrive (forges send a delivery at once). */
export const WEBHOOK_BODY_DEADLINE_MS = 10_000;

interface WebhookRouteDeps {
  log: Logger;
  newRequestId: () => string;
  /** WEBHOOK_BODY_DEADLINE_MS unless given (tests). */
  bodyDeadlineMs?: number;
}

export interface WebhookReceivers {
  /** The raw body (the signature covers its exact bytes) and the `Stripe-Signature` header. */
  billing: (rawBody: string, signature: string | undefined) => Promise<Record<string, unknown>>;
  /** Push-to-deploy (services/webhooks); none: its routes are not served. */
  push?: Pick<WebhookReceiver, 'forge' | 'generic'>;
}

const FORGE_ROUTES: ForgeSource[] = ['github', 'gitlab', 'bitbucket', 'gitea'];

/**
 * `POST /webhooks/billing`, outside `/api`: the payment provider holds no API key, so the
 * delivery's signature is its only authentication (checked by the receiver before anything
 * is read from the body). Answers 200 with what was done, or the error envelope.
 */
export function mountWebhooks(app: Hono, receivers: WebhookReceivers, deps: WebhookRouteDeps): void {
  const deadlineMs = deps.bodyDeadlineMs ?? WEBHOOK_BODY_DEADLINE_MS;
  app.post('/webhooks/billing', async (c) => {
    const requestId = deps.newRequestId();
    const log = deps.log.child({ requestId, route: 'webhooks/billing' });
    c.header('x-request-id', requestId);
    try {
      const raw = await readBoundedText(c.req.raw, MAX_WEBHOOK_BYTES, deadlineMs);
      const result = await receivers.billing(raw, c.req.header('stripe-signature'));
      log.info({ result }, 'billing webhook received');
      return c.json(result);
    } catch (err) {
      if (err instanceof DomainError) {
        log.warn({ code: err.code, reason: err.message }, 'billing webhook refused');
        // A refused body may be unread: the connection closes rather than carry the rest.
        if (err.code === 'BAD_REQUEST') c.header('connection', 'close');
        return c.json(errorBody(err.code, requestId, err.message, err.issues), statusOf[err.code]);
      }
      log.error({ err }, 'billing webhook failed');
      return c.json(errorBody('INTERNAL_SERVER_ERROR', requestId), 500);
    }
  });
  if (receivers.push) mountPushWebhooks(app, receivers.push, deps);
}

/**
 * `POST /webhooks/{github,gitlab,bitbucket,gitea}` and `POST /webhooks/deploy/<kind>/<id>/<token>`
 * (push-to-deploy): no API key; the forge's signature or the workload's token authenticates.
 * A body over MAX_PUSH_WEBHOOK_BYTES is refused with 413 before it is read further, one not in
 * within the deadline with 400. The
 * answer (200) lists each workload reached with its decision; deploys are only queued.
 * The token in the generic path is never logged.
 */
function mountPushWebhooks(app: Hono, push: NonNullable<WebhookReceivers['push']>, deps: WebhookRouteDeps): void {
  const deadlineMs = deps.bodyDeadlineMs ?? WEBHOOK_BODY_DEADLINE_MS;
  const run = async (c: Context, route: string, handle: (body: string) => Promise<unknown>) => {
    const requestId = deps.newRequestId();
    const log = deps.log.child({ requestId, route });
    c.header('x-request-id', requestId);
    let body: string;
    try {
      body = await readBoundedText(c.req.raw, MAX_PUSH_WEBHOOK_BYTES, deadlineMs);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const slow = err instanceof BodyTooSlow;
      log.warn({ reason: err.message }, slow ? 'webhook refused: body too slow' : 'webhook refused: body too large');
      c.header('connection', 'close');
      return c.json(errorBody('BAD_REQUEST', requestId, err.message, err.issues), slow ? 400 : 413);
    }
    try {
      return c.json((await handle(body)) as Record<string, unknown>);
    } catch (err) {
      if (err instanceof DomainError) {
        log.warn({ code: err.code, reason: err.message }, 'webhook refused');
        return c.json(errorBody(err.code, requestId, err.message, err.issues), statusOf[err.code]);
      }
      log.error({ err }, 'webhook failed');
      return c.json(errorBody('INTERNAL_SERVER_ERROR', requestId), 500);
    }
  };
  for (const source of FORGE_ROUTES) {
    app.post(`/webhooks/${source}`, (c) => run(c, `webhooks/${source}`, (body) => push.forge(source, { body, header: (n) => c.req.header(n) })));
  }
  for (const kind of ['application', 'compose'] as const) {
    app.post(`/webhooks/deploy/${kind}/:id/:token`, (c) =>
      run(c, `webhooks/deploy/${kind}`, (body) => push.generic(kind, c.req.param('id'), c.req.param('token'), { body, header: (n) => c.req.header(n) })),
    );
  }
}
