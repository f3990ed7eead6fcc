import { z } from 'zod';
import { BillingTier } from '../primitives.js';

/** A price of a product, per server. */
export const BillingPrice = z.object({
  priceId: z.string().min(1).describe("the payment provider's price id"),
  interval: z.enum(['month', 'year']),
  unitAmount: z.number().int().min(0).describe('per server and interval, in the smallest unit of the currency (cents)'),
  currency: z.string().regex(/^[a-z]{3}$/, 'an ISO 4217 code in lower case').describe('ISO 4217, lower case (usd, eur)'),
});

/**
 * A product offered by the operator, as configured in `SKIFF_BILLING_PRODUCTS` (a JSON list
 * of these; `description` and `prices` may be left out).
 */
export const BillingProduct = z.object({
  productId: z.string().min(1).describe("the payment provider's product id"),
  tier: BillingTier,
  name: z.string().min(1),
  description: z.string().nullable(),
  prices: z.array(BillingPrice),
});

/** The product list as configured: `description` and `prices` optional. */
export const BillingProductConfig = BillingProduct.extend({
  description: z.string().nullable().default(null),
  prices: z.array(BillingPrice).default([]),
});

export const BillingProducts = z.object({
  products: z.array(BillingProduct),
  paymentProviderConfigured: z.boolean().describe('whether checkout and portal sessions can be opened (a provider key is set)'),
});

export const ServerAllowance = z.object({
  canCreate: z.boolean(),
  servers: z.number().describe('servers the organization has'),
  maxServers: z
    .number()
    .nullable()
    .describe("the most it may have: its subscription's server quantity, else the platform's default; null when unlimited"),
});

/** A session of the payment provider: redirect the user to `url`. */
export const BillingSession = z.object({
  sessionId: z.string().describe("the provider's session id (cs_… for checkout, bps_… for the portal)"),
  url: z.string().describe('where to send the user'),
});
