import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { DomainError, statusOf } from '../errors.js';
import { readBoundedText } from './body.js';
import { errorBody } from './envelope.js';

/** The most a webhook delivery may hold (Stripe's events are a few kilobytes). */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

export interface WebhookReceivers {
  /** The raw body (the signature covers its exact bytes) and the `Stripe-Signature` header. */
  billing: (rawBody: string, signature: string | undefined) => Promise<Record<string, unknown>>;
}

/**
 * `POST /webhooks/billing`, outside `/api`: the payment provider holds no API key, so the
 * delivery's signature is its only authentication (checked by the receiver before anything
 * is read from the body). Answers 200 with what was done, or the error envelope.
 */
export function mountWebhooks(app: Hono, receivers: WebhookReceivers, deps: { log: Logger; newRequestId: () => string }): void {
  app.post('/webhooks/billing', async (c) => {
    const requestId = deps.newRequestId();
    const log = deps.log.child({ requestId, route: 'webhooks/billing' });
    c.header('x-request-id', requestId);
    try {
      const raw = await readBoundedText(c.req.raw, MAX_WEBHOOK_BYTES);
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
}
