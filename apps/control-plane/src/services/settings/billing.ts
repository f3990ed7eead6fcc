import type { Db } from '@skiff/db';
import { PUBLIC_ONLY } from '@skiff/outbound';
import type { Principal } from '../../authz/principal.js';
import { type BillingConfig, DEFAULT_BILLING_API_URL } from '../../config.js';
import { DomainError, Invalid } from '../../errors.js';
import type { ServerLimits, ServerService } from '../servers/servers.js';
import type { ServiceDeps } from '../shared/deps.js';
import { type BillingEvent, applyBillingEvent, parseBillingEvent } from './billing-events.js';
import { type ProviderSession, StripeClient } from './stripe-client.js';
import { signatureProblem } from './stripe-signature.js';

/**
 * Each organization's server limit: what its subscription pays for (`billing_accounts.max_servers`,
 * written by the provider's webhook), otherwise the platform's default (SKIFF_MAX_SERVERS).
 */
export class BillingAllowances implements ServerLimits {
  constructor(private readonly defaultMax: number | null) {}

  async limitOf(db: Db, organizationId: string): Promise<number | null> {
    const row = await db.selectFrom('billingAccounts').select('maxServers').where('organizationId', '=', organizationId).executeTakeFirst();
    return row?.maxServers ?? this.defaultMax;
  }
}

/**
 * Billing: the operator's products from configuration, checkout and customer-portal sessions
 * at a Stripe-shaped payment provider, and the provider's webhook, which keeps each
 * organization's customer and server allowance.
 */
export class BillingService {
  private readonly stripe: StripeClient | null;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly config: BillingConfig,
    private readonly servers: ServerService,
  ) {
    this.stripe = config.apiKey
      ? new StripeClient({ apiUrl: config.apiUrl ?? DEFAULT_BILLING_API_URL, apiKey: config.apiKey, outbound: deps.outbound ?? PUBLIC_ONLY })
      : null;
  }

  async getProducts() {
    return { products: this.config.products, paymentProviderConfigured: this.stripe !== null };
  }

  canCreateMoreServers(p: Principal) {
    return this.servers.allowance(p);
  }

  private provider(): StripeClient {
    if (!this.stripe) throw new DomainError('BAD_REQUEST', 'No payment provider is configured (SKIFF_BILLING_API_KEY is not set)');
    return this.stripe;
  }

  /** The configured price for the input: a product of the tier and its interval's price, or one of its prices named directly. */
  private priceFor(input: { tier: string; productId: string; isAnnual: boolean }): string {
    const product = this.config.products.find(
      (pr) => pr.productId === input.productId || pr.prices.some((price) => price.priceId === input.productId),
    );
    if (!product) throw Invalid('productId', 'not a product or price of this platform (billing.getProducts)');
    if (product.tier !== input.tier) throw Invalid('tier', `the product is of the ${product.tier} tier`);
    const interval = input.isAnnual ? 'year' : 'month';
    const named = product.prices.find((price) => price.priceId === input.productId);
    if (named) {
      if (named.interval !== interval) throw Invalid('isAnnual', `the price ${named.priceId} is billed per ${named.interval}`);
      return named.priceId;
    }
    const price = product.prices.find((pr) => pr.interval === interval);
    if (!price) throw Invalid('isAnnual', `the product has no ${interval}ly price`);
    return price.priceId;
  }

  /** SKIFF_BILLING_RETURN_URL, else the platform's own domain. */
  private async returnUrl(): Promise<string> {
    if (this.config.returnUrl) return this.config.returnUrl;
    const settings = await this.deps.db.selectFrom('platformSettings').select(['host', 'https']).executeTakeFirst();
    if (!settings?.host) {
      throw new DomainError(
        'BAD_REQUEST',
        "No address to send the user back to: set SKIFF_BILLING_RETURN_URL or assign the platform's domain (settings.assignDomainServer)",
      );
    }
    return `${settings.https ? 'https' : 'http'}://${settings.host}/`;
  }

  private async customerOf(organizationId: string): Promise<string | null> {
    const row = await this.deps.db.selectFrom('billingAccounts').select('customerId').where('organizationId', '=', organizationId).executeTakeFirst();
    return row?.customerId ?? null;
  }

  async createCheckoutSession(
    p: Principal,
    input: { tier: string; productId: string; serverQuantity: number; isAnnual: boolean },
  ): Promise<ProviderSession> {
    const stripe = this.provider();
    const price = this.priceFor(input);
    if (!Number.isInteger(input.serverQuantity)) throw Invalid('serverQuantity', 'must be a whole number');
    const back = await this.returnUrl();
    const customer = await this.customerOf(p.organizationId);
    return stripe.createCheckoutSession({
      mode: 'subscription',
      line_items: [{ price, quantity: input.serverQuantity }],
      success_url: withQuery(back, 'billing', 'success'),
      cancel_url: withQuery(back, 'billing', 'cancelled'),
      client_reference_id: p.organizationId,
      customer: customer ?? undefined,
      metadata: { organizationId: p.organizationId },
      // Subscription events carry the subscription's metadata, so they find the organization even before the checkout's event.
      subscription_data: { metadata: { organizationId: p.organizationId } },
    });
  }

  async createCustomerPortalSession(p: Principal): Promise<ProviderSession> {
    const stripe = this.provider();
    const customer = await this.customerOf(p.organizationId);
    if (!customer) {
      throw new DomainError('BAD_REQUEST', 'The organization has no customer at the payment provider yet: complete a checkout first');
    }
    return stripe.createPortalSession({ customer, return_url: await this.returnUrl() });
  }

  /**
   * `POST /webhooks/billing`: a delivery whose signature holds is applied once (by event id);
   * anything else is refused and changes nothing. Answers what was done, for the provider's log.
   */
  async receiveWebhook(rawBody: string, signature: string | undefined): Promise<{ received: true; duplicate: boolean; applied: string }> {
    const secret = this.config.webhookSecret;
    if (!secret) throw new DomainError('NOT_FOUND', 'Billing webhooks are not configured (SKIFF_BILLING_WEBHOOK_SECRET is not set)');
    const problem = signatureProblem(signature, rawBody, secret, this.deps.clock());
    if (problem) throw new DomainError('BAD_REQUEST', `Invalid webhook signature: ${problem}`);
    const event: BillingEvent = parseBillingEvent(rawBody);
    const prices = new Set(this.config.products.flatMap((pr) => pr.prices.map((price) => price.priceId)));
    return this.deps.db.transaction().execute(async (tx) => {
      const recorded = await tx
        .insertInto('billingEvents')
        .values({ eventId: event.id, type: event.type })
        .onConflict((oc) => oc.column('eventId').doNothing())
        .returning('eventId')
        .executeTakeFirst();
      if (!recorded) return { received: true as const, duplicate: true, applied: 'nothing (already received)' };
      const applied = await applyBillingEvent(tx, event, { prices, now: this.deps.clock() });
      return { received: true as const, duplicate: false, applied };
    });
  }
}

/** `url` with one query parameter set (the rest of it kept). */
function withQuery(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}
