import { type OutboundPolicy, OutboundFetchError, outboundFetch } from '@skiff/outbound';
import { z } from 'zod';
import { DomainError } from '../../errors.js';
import { type FormValue, stripeForm } from './stripe-form.js';
import { trimChar } from '@skiff/domain';

/** The most an answer of the provider may hold, and how long a request may take. */
const MAX_ANSWER_BYTES = 1024 * 1024;
const TIMEOUT_MS = 20_000;

const Session = z.object({ id: z.string().min(1), url: z.string().min(1) });
const ErrorAnswer = z.object({ error: z.object({ message: z.string().optional(), type: z.string().optional() }) });

/** A session the user is redirected to (checkout or customer portal). */
export interface ProviderSession {
  sessionId: string;
  url: string;
}

/**
 * The two calls of Stripe's API that billing makes, with the secret key as bearer token.
 * An error answer (`{error: {message, type}}`) becomes BAD_REQUEST with the provider's
 * message; the key never appears in a message.
 */
export class StripeClient {
  constructor(
    private readonly options: { apiUrl: string; apiKey: string; outbound: OutboundPolicy },
  ) {}

  createCheckoutSession(fields: Record<string, FormValue>): Promise<ProviderSession> {
    return this.post('/v1/checkout/sessions', fields);
  }

  createPortalSession(fields: { customer: string; return_url: string }): Promise<ProviderSession> {
    return this.post('/v1/billing_portal/sessions', fields);
  }

  private async post(path: string, fields: Record<string, FormValue>): Promise<ProviderSession> {
    const url = `${trimChar(this.options.apiUrl, '/', 'end')}${path}`;
    let answer;
    try {
      answer = await outboundFetch(url, {
        policy: this.options.outbound,
        method: 'POST',
        maxBytes: MAX_ANSWER_BYTES,
        timeoutMs: TIMEOUT_MS,
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: stripeForm(fields),
      });
    } catch (error) {
      const reason = error instanceof OutboundFetchError ? error.message : 'the request failed';
      throw this.failure(`could not reach ${url}: ${reason}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(answer.body.toString('utf8'));
    } catch {
      throw this.failure(`${url} answered HTTP ${answer.status} with something that is not JSON`);
    }
    if (answer.status < 200 || answer.status > 299) {
      const error = ErrorAnswer.safeParse(json);
      const said = error.success ? `${error.data.error.type ?? 'error'}: ${error.data.error.message ?? 'no message'}` : 'no error message';
      throw this.failure(`HTTP ${answer.status}, ${said}`);
    }
    const session = Session.safeParse(json);
    if (!session.success) throw this.failure(`${url} answered without a session id and url`);
    return { sessionId: session.data.id, url: session.data.url };
  }

  /** A message never carries the key, even if the provider echoed it. */
  private failure(message: string): DomainError {
    const clean = message.replaceAll(this.options.apiKey, '[key]').slice(0, 500);
    return new DomainError('BAD_REQUEST', `The payment provider refused or failed: ${clean}`);
  }
}
