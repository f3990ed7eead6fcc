import { type OutboundAnswer, OutboundFetchError, outboundFetch, type OutboundPolicy, type Resolver } from '@skiff/outbound';
import { DeliveryError } from './channel-sender.js';

/** How the HTTP senders reach their services (libs/outbound: checked addresses, no redirects). */
export interface HttpLimits {
  policy: OutboundPolicy;
  /** For one request: resolving, connecting, sending and reading the answer. */
  timeoutMs: number;
  /** The largest answer read. */
  maxBytes: number;
  resolver?: Resolver;
}

/**
 * Every piece of `secrets` that must not reach an error message: each value, and for a URL
 * (a webhook URL is a credential) also its path, query and every long part of them, since a
 * message may quote them apart (a redirect's Location, a service echoing the path).
 */
export function secretPieces(secrets: readonly string[]): string[] {
  const pieces = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    pieces.add(secret);
    const url = URL.parse(secret);
    if (!url) continue;
    pieces.add(url.pathname + url.search);
    for (const part of `${url.pathname}/${url.search.slice(1)}`.split(/[/?&=]/)) if (part.length >= 8) pieces.add(part);
  }
  // Longest first, so a whole URL is masked before its parts.
  return [...pieces].sort((a, b) => b.length - a.length);
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const piece of secretPieces(secrets)) out = out.split(piece).join('[redacted]');
  return out;
}

/** A service's own words about a refusal, short and without secrets. */
export function answerText(answer: OutboundAnswer, secrets: readonly string[]): string {
  const text = answer.body.toString('utf8').replace(/\s+/g, ' ').trim().slice(0, 300);
  return scrub(text, secrets);
}

export function parseJson(answer: OutboundAnswer): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Seconds in a Retry-After header, in milliseconds. */
export function retryAfterHeader(answer: OutboundAnswer): number | undefined {
  const seconds = Number(answer.headers['retry-after']);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
}

/**
 * POSTs JSON through the outbound module. A request that brought no answer is a DeliveryError
 * (retryable unless the destination itself is refused); any answer is the caller's to judge.
 */
export async function postJson(
  url: string,
  body: unknown,
  request: { limits: HttpLimits; service: string; field: string; secrets: readonly string[]; headers?: Record<string, string>; signal?: AbortSignal },
): Promise<OutboundAnswer> {
  try {
    return await outboundFetch(url, {
      policy: request.limits.policy,
      timeoutMs: request.limits.timeoutMs,
      maxBytes: request.limits.maxBytes,
      resolver: request.limits.resolver,
      signal: request.signal,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Skiff', ...request.headers },
      body: JSON.stringify(body),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const permanent = error instanceof OutboundFetchError && error.permanent;
    throw new DeliveryError(`${request.service}: ${scrub(message, request.secrets)}`, !permanent, permanent ? { field: request.field } : {});
  }
}

/**
 * What an HTTP answer that is not a success means for a webhook-like service: 429 and 5xx
 * may pass later; 401, 403, 404 and 410 say the URL or its credential is wrong.
 */
export function refusal(answer: OutboundAnswer, service: string, field: string, secrets: readonly string[]): DeliveryError {
  const said = answerText(answer, secrets);
  const message = `${service} answered HTTP ${answer.status}${said ? `: ${said}` : ''}`;
  if (answer.status === 429) return new DeliveryError(message, true, { retryAfterMs: retryAfterHeader(answer) });
  if (answer.status >= 500 || answer.status === 408) return new DeliveryError(message, true);
  const credential = [401, 403, 404, 410].includes(answer.status);
  return new DeliveryError(message, false, credential ? { field } : {});
}

/** Cuts text to `max` characters, marking the cut. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
