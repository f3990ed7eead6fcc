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

  it('keeps sessions for admins; members may read products and the allowance', async () => {
    const m = t.as((await addMember(t, 'billing-member@example.com')).key);
    expect((await m('billing.getProducts')).status).toBe(200);
    expect((await m('billing.canCreateMoreServers')).status).toBe(200);
    expect((await m('billing.createCheckoutSession', checkout)).status).toBe(403);
    expect((await m('billing.createCustomerPortalSession')).status).toBe(403);
  });
});

describe('billing from configuration', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    const billing = readBillingConfig({
      SKIFF_BILLING_PRODUCTS: JSON.stringify(PRODUCTS),
      SKIFF_MAX_SERVERS: '2',
      SKIFF_BILLING_API_KEY: 'sk_test_provider_key',
    });
    t = await startTestPlatform({ billing });
  });
  afterAll(() => t?.close());

  it('lists the configured products, filling what was left out', async () => {
    const res = await t.call('billing.getProducts');
    expect(res.body.paymentProviderConfigured).toBe(true);
    expect(res.body.products).toEqual([
      { ...PRODUCTS[0], description: null },
      { ...PRODUCTS[1], prices: [] },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('sk_test_provider_key');
  });

  it('counts servers per organization against the limit, and server.create obeys it', async () => {
    expect((await t.call('billing.canCreateMoreServers')).body).toEqual({ canCreate: true, servers: 0, maxServers: 2 });
    await t.call('server.create', { name: 'a', address: '203.0.113.1' });
    const second = await t.call('server.create', { name: 'b', address: '203.0.113.2' });
    expect((await t.call('billing.canCreateMoreServers')).body).toEqual({ canCreate: false, servers: 2, maxServers: 2 });
    const refused = await t.call('server.create', { name: 'c', address: '203.0.113.3' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/limit of 2 servers/);
    expect((await t.call('server.all')).body).toHaveLength(2);

    // Another organization has its own count.
    const other = await t.call('organization.create', { name: 'Billing elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    expect((await t.as(key)('billing.canCreateMoreServers')).body).toEqual({ canCreate: true, servers: 0, maxServers: 2 });
    expect((await t.as(key)('server.create', { name: 'theirs', address: '198.51.100.1' })).status).toBe(200);

    // Removing one makes room again.
    await t.call('server.remove', { serverId: second.body.serverId });
    expect((await t.call('billing.canCreateMoreServers')).body.canCreate).toBe(true);
    expect((await t.call('server.create', { name: 'c', address: '203.0.113.3' })).status).toBe(200);
  });

  it('checks the product, then answers NOT_IMPLEMENTED: the payment provider is not reached yet', async () => {
    const unknown = await t.call('billing.createCheckoutSession', { ...checkout, productId: 'prod_missing' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].path).toEqual(['productId']);
    const wrongTier = await t.call('billing.createCheckoutSession', { ...checkout, tier: 'startup' });
    expect(wrongTier.status).toBe(400);
    expect(wrongTier.body.issues[0].path).toEqual(['tier']);
    for (const [op, input] of [
      ['billing.createCheckoutSession', checkout],
      ['billing.createCheckoutSession', { ...checkout, productId: 'price_hobby_year', isAnnual: true }],
      ['billing.createCustomerPortalSession', {}],
    ] as const) {
      const res = await t.call(op, input);
      expect(res.status, op).toBe(501);
      expect(res.body.code).toBe('NOT_IMPLEMENTED');
    }
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
  });
});
