import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BillingTier } from '../primitives.js';
import { BillingSession } from './record.js';

export const createCheckoutSession = defineContract({
  method: 'POST',
  summary: 'Open a payment-provider checkout session for a subscription',
  description:
    '`productId` is a configured product (`billing.getProducts`) of `tier`, or one of its ' +
    'prices; `isAnnual` picks its yearly price, otherwise its monthly one; `serverQuantity` is ' +
    'the number of servers paid for, which becomes the organization\'s server limit once the ' +
    "provider confirms the subscription through its webhook. Opens a subscription checkout at " +
    'the provider (Stripe\'s API shape) and answers its id and the URL to send the user to. ' +
    'BAD_REQUEST ("no payment provider is configured") when no provider key is set ' +
    '(`SKIFF_BILLING_API_KEY`); BAD_REQUEST naming `productId`, `tier` or `isAnnual` when the ' +
    "product, its tier or its interval does not match the configuration; BAD_REQUEST with the " +
    "provider's message when it refuses.",
  input: z.object({
    tier: BillingTier,
    productId: z.string(),
    serverQuantity: z.number().min(1),
    isAnnual: z.boolean(),
  }),
  output: BillingSession,
  access: { role: 'admin' },
  example: { tier: 'hobby', productId: 'price_example', serverQuantity: 2, isAnnual: false },
});
