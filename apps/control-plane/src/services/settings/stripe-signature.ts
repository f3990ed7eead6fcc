import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a delivery's timestamp may be from now (Stripe's libraries use the same default). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * Checks a `Stripe-Signature` header (`t=<unix seconds>,v1=<hex>[,v1=<hex>…]`) over the raw
 * body: some v1 must be the HMAC-SHA256 of `${t}.${body}` keyed with the signing secret, and
 * `t` within the tolerance of `now`. Answers why not, or null when it holds. Other schemes
 * (v0) are ignored.
 */
export function signatureProblem(header: string | undefined, rawBody: string, secret: string, now: Date): string | null {
  if (!header) return 'the Stripe-Signature header is missing';
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value);
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return 'the Stripe-Signature header has no timestamp';
  if (signatures.length === 0) return 'the Stripe-Signature header has no v1 signature';
  const age = Math.abs(now.getTime() / 1000 - Number(timestamp));
  if (age > SIGNATURE_TOLERANCE_SECONDS) return 'the signature timestamp is outside the tolerance';
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest();
  const matches = signatures.some((hex) => {
    if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
    return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
  });
  return matches ? null : 'no signature matches the body';
}

/** A header as the provider sends it (tests sign their deliveries with it). */
export function signPayload(rawBody: string, secret: string, timestamp: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}
