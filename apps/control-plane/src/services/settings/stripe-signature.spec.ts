import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureProblem } from './stripe-signature.js';

const secret = 'whsec_test_secret';
const body = '{"id":"evt_1","type":"customer.subscription.updated"}';
const now = new Date('2026-12-02T08:00:00Z');
const t = Math.floor(now.getTime() / 1000);
/** Signed by hand, as Stripe documents the scheme: HMAC-SHA256 of `${t}.${body}`, hex. */
const v1 = (ts: number, payload = body, key = secret) => createHmac('sha256', key).update(`${ts}.${payload}`).digest('hex');

describe('signatureProblem', () => {
  it('takes a signature of the raw body with a recent timestamp, among other v1 and v0 values', () => {
    expect(signatureProblem(`t=${t},v1=${v1(t)}`, body, secret, now)).toBeNull();
    expect(signatureProblem(`t=${t},v1=${'0'.repeat(64)},v1=${v1(t)},v0=abc`, body, secret, now)).toBeNull();
    expect(signatureProblem(`t=${t - 299},v1=${v1(t - 299)}`, body, secret, now)).toBeNull();
  });

  it('refuses a missing, malformed, foreign or stale signature and a changed body', () => {
    expect(signatureProblem(undefined, body, secret, now)).toMatch(/missing/);
    expect(signatureProblem(`v1=${v1(t)}`, body, secret, now)).toMatch(/timestamp/);
    expect(signatureProblem(`t=${t}`, body, secret, now)).toMatch(/no v1/);
    expect(signatureProblem(`t=${t},v1=${v1(t, body, 'whsec_other')}`, body, secret, now)).toMatch(/no signature matches/);
    expect(signatureProblem(`t=${t},v1=${v1(t)}`, `${body} `, secret, now)).toMatch(/no signature matches/);
    expect(signatureProblem(`t=${t},v1=${v1(t).slice(2)}`, body, secret, now)).toMatch(/no signature matches/);
    expect(signatureProblem(`t=${t - 301},v1=${v1(t - 301)}`, body, secret, now)).toMatch(/tolerance/);
    expect(signatureProblem(`t=${t + 301},v1=${v1(t + 301)}`, body, secret, now)).toMatch(/tolerance/);
    // The signature of another timestamp does not carry over.
    expect(signatureProblem(`t=${t},v1=${v1(t - 1)}`, body, secret, now)).toMatch(/no signature matches/);
  });
});
