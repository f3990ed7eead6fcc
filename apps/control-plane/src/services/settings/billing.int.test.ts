import { createHmac, randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBillingConfig } from '../../config.js';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const PRODUCTS = [
  {
    productId: 'prod_hobby',
    tier: 'hobby',
    name: 'Hobby',
    prices: [
      { priceId: 'price_hobby_month', interval: 'month', unitAmount: 450, currency: 'usd' },
      { priceId: 'price_hobby_year', interval: 'year', unitAmount: 4500, currency: 'usd' },
    ],
  },
  { productId: 'prod_startup', tier: 'startup', name: 'Startup', description: 'For teams' },
];

const checkout = { tier: 'hobby', productId: 'prod_hobby', serverQuantity: 2, isAnnual: false };

describe('billing without configuration', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.close());

  it('offers no products, no provider, and no server limit', async () => {
    expect((await t.call('billing.getProducts')).body).toEqual({ products: [], paymentProviderConfigured: false });
    expect((await t.call('billing.canCreateMoreServers')).body).toEqual({ canCreate: true, servers: 0, maxServers: null });
    for (let i = 0; i < 3; i++) expect((await t.call('server.create', { name: `s${i}`, address: `203.0.113.${i + 1}` })).status).toBe(200);
    expect((await t.call('billing.canCreateMoreServers')).body).toEqual({ canCreate: true, servers: 3, maxServers: null });
  });

  it('refuses checkout and portal sessions plainly: no payment provider is configured', async () => {
    for (const [op, input] of [
      ['billing.createCheckoutSession', checkout],
      ['billing.createCustomerPortalSession', {}],
    ] as const) {
      const res = await t.call(op, input);
      expect(res.status, op).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
      expect(res.body.message).toMatch(/no payment provider is configured/i);
    }
  });

  it('serves no billing webhook without a signing secret', async () => {
    const res = await t.platform.app.request('http://skiff.test/webhooks/billing', { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).message).toMatch(/SKIFF_BILLING_WEBHOOK_SECRET/);
  });

  it('keeps sessions for admins; members may read products and the allowance', async () => {
    const m = t.as((await addMember(t, 'billing-member@example.com')).key);
    expect((await m('billing.getProducts')).status).toBe(200);
    expect((await m('billing.canCreateMoreServers')).status).toBe(200);
    expect((await m('billing.createCheckoutSession', checkout)).status).toBe(403);
    expect((await m('billing.createCustomerPortalSession')).status).toBe(403);
  });
});

/** A Stripe-shaped API on loopback: records each request as received and answers what the test queued. */
async function startStripeSink() {
  const requests: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const answers: { status: number; body: unknown }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers.shift() ?? { status: 500, body: { error: { type: 'api_error', message: 'nothing queued' } } };
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer: (status: number, body: unknown) => answers.push({ status, body }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const API_KEY = 'sk_test_51SkiffBillingProviderKey';
const WEBHOOK_SECRET = 'whsec_skiff_billing_test_secret';
const RETURN_URL = 'https://skiff.example.com/billing';

describe('billing with a payment provider (Stripe API shape)', () => {
  let t: TestPlatform;
  let sink: Awaited<ReturnType<typeof startStripeSink>>;
  let org: string;
  let eventSeq = 0;
  beforeAll(async () => {
    sink = await startStripeSink();
    const billing = readBillingConfig({
      SKIFF_BILLING_PRODUCTS: JSON.stringify(PRODUCTS),
      SKIFF_MAX_SERVERS: '1',
      SKIFF_BILLING_API_KEY: API_KEY,
      SKIFF_BILLING_API_URL: sink.url,
      SKIFF_BILLING_WEBHOOK_SECRET: WEBHOOK_SECRET,
      SKIFF_BILLING_RETURN_URL: RETURN_URL,
    });
    t = await startTestPlatform({ billing });
    t.watch.secret(API_KEY);
    t.watch.secret(WEBHOOK_SECRET);
    org = t.organizationId;
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  /** An event as Stripe sends it, `created` later than every event before it. */
  const event = (type: string, object: Record<string, unknown>, id = `evt_${randomUUID().replaceAll('-', '')}`) => ({
    id,
    object: 'event',
    api_version: '2024-06-20',
    created: Math.floor(Date.now() / 1000) + eventSeq++,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
  const subscription = (quantity: number, status = 'active', organizationId = org, customer = 'cus_skiff_1') => ({
    id: 'sub_skiff_1',
    object: 'subscription',
    customer,
    status,
    metadata: { organizationId },
    items: {
      object: 'list',
      data: [{ id: 'si_1', object: 'subscription_item', price: { id: 'price_hobby_year', object: 'price', product: 'prod_hobby' }, quantity }],
    },
  });
  /** Delivers a body signed as Stripe documents it: `t=<seconds>,v1=<HMAC-SHA256 of "t.body">`. */
  const deliver = async (payload: unknown, options: { secret?: string; at?: number; signature?: string | null; rawBody?: string } = {}) => {
    const body = options.rawBody ?? JSON.stringify(payload);
    const at = options.at ?? Math.floor(Date.now() / 1000);
    const v1 = createHmac('sha256', options.secret ?? WEBHOOK_SECRET).update(`${at}.${body}`).digest('hex');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.signature !== null) headers['stripe-signature'] = options.signature ?? `t=${at},v1=${v1}`;
    const res = await t.platform.app.request('http://skiff.test/webhooks/billing', { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as any };
  };
  const allowance = async (key?: string) => (await (key ? t.as(key) : t.call)('billing.canCreateMoreServers')).body;
  const stored = async () => ({
    events: (await t.db.selectFrom('billingEvents').selectAll().execute()).length,
    accounts: await t.db.selectFrom('billingAccounts').selectAll().orderBy('organizationId').execute(),
  });

  it('opens a subscription checkout: the exact form-encoded request, the session answered', async () => {
    sink.answer(200, { id: 'cs_test_a1', object: 'checkout.session', url: 'https://checkout.stripe.com/c/pay/cs_test_a1', mode: 'subscription' });
    const res = await t.call('billing.createCheckoutSession', { tier: 'hobby', productId: 'prod_hobby', serverQuantity: 3, isAnnual: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ sessionId: 'cs_test_a1', url: 'https://checkout.stripe.com/c/pay/cs_test_a1' });
    const sent = sink.requests.at(-1)!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/checkout/sessions');
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect([...new URLSearchParams(sent.body)]).toEqual([
      ['mode', 'subscription'],
      ['line_items[0][price]', 'price_hobby_year'],
      ['line_items[0][quantity]', '3'],
      ['success_url', `${RETURN_URL}?billing=success`],
      ['cancel_url', `${RETURN_URL}?billing=cancelled`],
      ['client_reference_id', org],
      ['metadata[organizationId]', org],
      ['subscription_data[metadata][organizationId]', org],
    ]);

    // A price named directly, billed monthly.
    sink.answer(200, { id: 'cs_test_a2', object: 'checkout.session', url: 'https://checkout.stripe.com/c/pay/cs_test_a2' });
    const monthly = await t.call('billing.createCheckoutSession', { tier: 'hobby', productId: 'price_hobby_month', serverQuantity: 1, isAnnual: false });
    expect(monthly.body.sessionId).toBe('cs_test_a2');
    expect(new URLSearchParams(sink.requests.at(-1)!.body).get('line_items[0][price]')).toBe('price_hobby_month');
  });

  it('refuses what does not match the configuration before reaching the provider, naming the field', async () => {
    const before = sink.requests.length;
    for (const [input, field] of [
      [{ ...checkout, productId: 'prod_missing' }, 'productId'],
      [{ ...checkout, tier: 'startup' }, 'tier'],
      [{ ...checkout, productId: 'price_hobby_year', isAnnual: false }, 'isAnnual'],
      [{ tier: 'startup', productId: 'prod_startup', serverQuantity: 1, isAnnual: false }, 'isAnnual'],
      [{ ...checkout, serverQuantity: 1.5 }, 'serverQuantity'],
    ] as const) {
      const res = await t.call('billing.createCheckoutSession', input);
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.body.issues[0].path).toEqual([field]);
    }
    expect(sink.requests.length).toBe(before);
  });

  it("turns the provider's error into a clear BAD_REQUEST without the key", async () => {
    sink.answer(400, { error: { type: 'invalid_request_error', message: `No such price: 'price_hobby_month'; key ${API_KEY}`, param: 'line_items[0][price]' } });
    const res = await t.call('billing.createCheckoutSession', checkout);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_REQUEST');
    expect(res.body.message).toMatch(/invalid_request_error: No such price/);
    expect(JSON.stringify(res.body)).not.toContain(API_KEY);
  });

  it('has no portal before a checkout completed; the completed checkout keeps the customer', async () => {
    const before = sink.requests.length;
    const none = await t.call('billing.createCustomerPortalSession');
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/no customer/i);
    expect(sink.requests.length).toBe(before);

    const done = await deliver(
      event('checkout.session.completed', {
        id: 'cs_test_a1',
        object: 'checkout.session',
        mode: 'subscription',
        client_reference_id: org,
        customer: 'cus_skiff_1',
        subscription: 'sub_skiff_1',
        metadata: { organizationId: org },
        status: 'complete',
      }),
    );
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    sink.answer(200, { id: 'bps_test_1', object: 'billing_portal.session', url: 'https://billing.stripe.com/p/session/test_1' });
    const portal = await t.call('billing.createCustomerPortalSession');
    expect(portal.body).toEqual({ sessionId: 'bps_test_1', url: 'https://billing.stripe.com/p/session/test_1' });
    const sent = sink.requests.at(-1)!;
    expect([sent.method, sent.path, sent.headers.authorization, sent.headers['content-type']]).toEqual([
      'POST',
      '/v1/billing_portal/sessions',
      `Bearer ${API_KEY}`,
      'application/x-www-form-urlencoded',
    ]);
    expect([...new URLSearchParams(sent.body)]).toEqual([
      ['customer', 'cus_skiff_1'],
      ['return_url', RETURN_URL],
    ]);

    // The next checkout is for the same customer.
    sink.answer(200, { id: 'cs_test_a3', object: 'checkout.session', url: 'https://checkout.stripe.com/c/pay/cs_test_a3' });
    await t.call('billing.createCheckoutSession', checkout);
    expect(new URLSearchParams(sink.requests.at(-1)!.body).get('customer')).toBe('cus_skiff_1');
  });

  it("sets the organization's server allowance from its subscription; server.create obeys it; others keep the default", async () => {
    const other = await t.call('organization.create', { name: 'Billing elsewhere' });
    const otherKey = t.watch.secret((await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key);
    expect(await allowance()).toEqual({ canCreate: true, servers: 0, maxServers: 1 });
    expect((await t.call('server.create', { name: 'a', address: '203.0.113.1' })).status).toBe(200);
    expect((await t.call('server.create', { name: 'b', address: '203.0.113.2' })).body.message).toMatch(/limit of 1 servers/);

    expect((await deliver(event('customer.subscription.created', subscription(3)))).body.applied).toBe('allowance set to 3 servers');
    expect(await allowance()).toEqual({ canCreate: true, servers: 1, maxServers: 3 });
    expect((await t.call('server.create', { name: 'b', address: '203.0.113.2' })).status).toBe(200);
    expect((await t.call('server.create', { name: 'c', address: '203.0.113.3' })).status).toBe(200);
    const refused = await t.call('server.create', { name: 'd', address: '203.0.113.4' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/limit of 3 servers/);

    // Another organization's allowance is untouched, even by an event naming it in metadata for this customer.
    expect(await allowance(otherKey)).toEqual({ canCreate: true, servers: 0, maxServers: 1 });
    await deliver(event('customer.subscription.updated', subscription(9, 'active', other.body.organizationId)));
    expect((await allowance(otherKey)).maxServers).toBe(1);
    expect((await t.as(otherKey)('server.create', { name: 'theirs', address: '198.51.100.1' })).status).toBe(200);
    expect((await t.as(otherKey)('server.create', { name: 'theirs2', address: '198.51.100.2' })).status).toBe(400);
  });

  it('applies an event once: a replay changes nothing, nor does an older event arriving late', async () => {
    const five = event('customer.subscription.updated', subscription(5));
    const olderTwo = event('customer.subscription.updated', subscription(2));
    const four = event('customer.subscription.updated', subscription(4));
    expect((await deliver(five)).body).toMatchObject({ duplicate: false, applied: 'allowance set to 5 servers' });
    expect((await deliver(four)).body.duplicate).toBe(false);
    expect((await allowance()).maxServers).toBe(4);
    const replay = await deliver(five);
    expect(replay.status).toBe(200);
    expect(replay.body.duplicate).toBe(true);
    expect((await allowance()).maxServers).toBe(4);
    expect((await deliver(olderTwo)).body.applied).toMatch(/newer event/);
    expect((await allowance()).maxServers).toBe(4);
  });

  it('refuses a delivery without a valid, recent signature, and stores nothing', async () => {
    const before = await stored();
    const payload = event('customer.subscription.updated', subscription(50));
    const now = Math.floor(Date.now() / 1000);
    for (const [why, options] of [
      ['no signature', { signature: null }],
      ['another secret', { secret: 'whsec_someone_else' }],
      ['stale timestamp', { at: now - 301 }],
      ['future timestamp', { at: now + 301 }],
      ['garbled header', { signature: 'v1=abc' }],
      ['signature of another body', { signature: `t=${now},v1=${createHmac('sha256', WEBHOOK_SECRET).update(`${now}.{}`).digest('hex')}` }],
    ] as const) {
      const res = await deliver(payload, options);
      expect(res.status, why).toBe(400);
      expect(res.body.code, why).toBe('BAD_REQUEST');
      expect(res.body.message, why).toMatch(/signature/i);
    }
    const tooLarge = await deliver(null, { rawBody: JSON.stringify({ ...payload, padding: 'x'.repeat(300 * 1024) }) });
    expect(tooLarge.status).toBe(400);
    expect(await stored()).toEqual(before);
    expect((await allowance()).maxServers).toBe(4);
  });

  it("never moves a customer to another organization; events about no organization here change nothing", async () => {
    const other = await t.call('organization.create', { name: 'Billing thief' });
    const otherKey = t.watch.secret((await t.call('user.createApiKey', { name: 'x', metadata: { organizationId: other.body.organizationId } })).body.key);
    const before = (await stored()).accounts;
    const moved = await deliver(
      event('checkout.session.completed', { id: 'cs_x', object: 'checkout.session', client_reference_id: other.body.organizationId, customer: 'cus_skiff_1' }),
    );
    expect(moved.body.applied).toMatch(/another organization/);
    const nowhere = await deliver(event('customer.subscription.created', subscription(7, 'active', 'org_nowhere', 'cus_nowhere')));
    expect(nowhere.status).toBe(200);
    expect(nowhere.body.applied).toMatch(/no organization/);
    expect((await stored()).accounts).toEqual(before);
    expect((await t.as(otherKey)('billing.createCustomerPortalSession')).body.message).toMatch(/no customer/i);
  });

  it('puts the allowance back to the default when the subscription ends', async () => {
    expect((await deliver(event('customer.subscription.deleted', subscription(4, 'canceled')))).body.applied).toBe('allowance back to the default');
    expect(await allowance()).toEqual({ canCreate: false, servers: 3, maxServers: 1 });
    expect((await t.call('server.create', { name: 'e', address: '203.0.113.5' })).status).toBe(400);
  });
});

describe('billing without SKIFF_BILLING_RETURN_URL', () => {
  let t: TestPlatform;
  let sink: Awaited<ReturnType<typeof startStripeSink>>;
  beforeAll(async () => {
    sink = await startStripeSink();
    const billing = readBillingConfig({ SKIFF_BILLING_PRODUCTS: JSON.stringify(PRODUCTS), SKIFF_BILLING_API_KEY: API_KEY, SKIFF_BILLING_API_URL: sink.url });
    t = await startTestPlatform({ billing });
    t.watch.secret(API_KEY);
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  it("sends users back to the platform's own domain, and says what to set when there is none", async () => {
    const none = await t.call('billing.createCheckoutSession', checkout);
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/SKIFF_BILLING_RETURN_URL/);
    expect(sink.requests).toHaveLength(0);
    await t.db.updateTable('platformSettings').set({ host: 'skiff.example.org', https: true }).execute();
    sink.answer(200, { id: 'cs_test_d1', object: 'checkout.session', url: 'https://checkout.stripe.com/c/pay/cs_test_d1' });
    expect((await t.call('billing.createCheckoutSession', checkout)).status).toBe(200);
    const form = new URLSearchParams(sink.requests[0]!.body);
    expect([form.get('success_url'), form.get('cancel_url')]).toEqual([
      'https://skiff.example.org/?billing=success',
      'https://skiff.example.org/?billing=cancelled',
    ]);
  });
});

describe('readBillingConfig', () => {
  it('defaults to no products, no limit and no provider', () => {
    expect(readBillingConfig({})).toEqual({ products: [], maxServers: null, apiKey: undefined });
  });

  it('refuses configuration that does not read, saying which variable', () => {
    expect(() => readBillingConfig({ SKIFF_BILLING_PRODUCTS: '{not json' })).toThrow(/SKIFF_BILLING_PRODUCTS is not JSON/);
    expect(() => readBillingConfig({ SKIFF_BILLING_PRODUCTS: JSON.stringify([{ productId: 'p', tier: 'gold', name: 'Gold' }]) })).toThrow(
      /SKIFF_BILLING_PRODUCTS: 0\.tier/,
    );
    expect(() => readBillingConfig({ SKIFF_MAX_SERVERS: 'many' })).toThrow(/SKIFF_MAX_SERVERS/);
    expect(() => readBillingConfig({ SKIFF_MAX_SERVERS: '-1' })).toThrow(/SKIFF_MAX_SERVERS/);
    expect(readBillingConfig({ SKIFF_MAX_SERVERS: '0' }).maxServers).toBe(0);
    expect(() => readBillingConfig({ SKIFF_BILLING_API_URL: 'ftp://api.example.com' })).toThrow(/SKIFF_BILLING_API_URL/);
    expect(() => readBillingConfig({ SKIFF_BILLING_API_URL: 'http://169.254.169.254/' })).toThrow(/SKIFF_BILLING_API_URL/);
    expect(() => readBillingConfig({ SKIFF_BILLING_RETURN_URL: 'javascript:alert(1)' })).toThrow(/SKIFF_BILLING_RETURN_URL/);
    expect(() => readBillingConfig({ SKIFF_BILLING_API_KEY: 'sk_test with space' })).toThrow(/SKIFF_BILLING_API_KEY/);
    const twice = [{ ...PRODUCTS[0], prices: [PRODUCTS[0]!.prices![0], { ...PRODUCTS[0]!.prices![0], priceId: 'price_other' }] }];
    expect(() => readBillingConfig({ SKIFF_BILLING_PRODUCTS: JSON.stringify(twice) })).toThrow(/more than one monthly price/);
  });

  it('reads the provider settings', () => {
    expect(
      readBillingConfig({
        SKIFF_BILLING_API_KEY: 'sk_live_x',
        SKIFF_BILLING_API_URL: 'https://stripe.internal.example',
        SKIFF_BILLING_WEBHOOK_SECRET: 'whsec_x',
        SKIFF_BILLING_RETURN_URL: 'https://skiff.example.com/',
      }),
    ).toEqual({
      products: [],
      maxServers: null,
      apiKey: 'sk_live_x',
      apiUrl: 'https://stripe.internal.example',
      webhookSecret: 'whsec_x',
      returnUrl: 'https://skiff.example.com/',
    });
  });
});
