import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BillingTier, Unspecified } from '../primitives.js';

export const createCheckoutSession = defineContract({
  method: 'POST',
  summary: 'Open a payment-provider checkout session for a subscription',
  description:
    '`productId` is the price or product of the provider for `tier`; `serverQuantity` the ' +
    'number of servers paid for; `isAnnual` picks yearly billing. Answers the session (its ' +
    'URL to redirect to); BAD_REQUEST when no payment provider key is configured.',
  input: z.object({
    tier: BillingTier,
    productId: z.string(),
    serverQuantity: z.number().min(1),
    isAnnual: z.boolean(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { tier: 'hobby', productId: 'price_example', serverQuantity: 2, isAnnual: false },
});
