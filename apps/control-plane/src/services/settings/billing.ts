import type { Principal } from '../../authz/principal.js';
import type { BillingConfig } from '../../config.js';
import { DomainError, Invalid, NotImplemented } from '../../errors.js';
import type { ServerService } from '../servers/servers.js';

/**
 * Billing from the platform's configuration: the products the operator offers and the server
 * limit. Sessions of the payment provider are not built yet: without a provider key they are
 * refused plainly; with one they answer NOT_IMPLEMENTED rather than pretend.
 */
export class BillingService {
  constructor(
    private readonly config: BillingConfig,
    private readonly servers: ServerService,
  ) {}

  async getProducts() {
    return { products: this.config.products, paymentProviderConfigured: this.config.apiKey !== undefined };
  }

  canCreateMoreServers(p: Principal) {
    return this.servers.allowance(p);
  }

  private requireProvider() {
    if (this.config.apiKey === undefined) {
      throw new DomainError('BAD_REQUEST', 'No payment provider is configured (SKIFF_BILLING_API_KEY is not set)');
    }
  }

  async createCheckoutSession(input: { tier: string; productId: string }): Promise<never> {
    this.requireProvider();
    const product = this.config.products.find(
      (pr) => pr.productId === input.productId || pr.prices.some((price) => price.priceId === input.productId),
    );
    if (!product) throw Invalid('productId', 'not a product or price of this platform (billing.getProducts)');
    if (product.tier !== input.tier) throw Invalid('tier', `the product is of the ${product.tier} tier`);
    throw NotImplemented('billing.createCheckoutSession');
  }

  async createCustomerPortalSession(): Promise<never> {
    this.requireProvider();
    throw NotImplemented('billing.createCustomerPortalSession');
  }
}
