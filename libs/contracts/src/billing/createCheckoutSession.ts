import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BillingTier, Unspecified } from '../primitives.js';

export const createCheckoutSession = defineContract({
  method: 'POST',
  summary: 'Open a payment-provider checkout session for a subscription',
  description:
    '`productId` is the price or product of the provider for `tier`; `serverQuantity` the ' +
    'number of servers paid for; `isAnnual` picks yearly billing. Answers BAD_REQUEST ("no ' +
    'payment provider is configured") when no provider key is set (`SKIFF_BILLING_API_KEY`), ' +
    'and BAD_REQUEST naming `productId` when it is not a configured product. With a key set ' +
    'it answers NOT_IMPLEMENTED for now: talking to the payment provider is not built yet ' +
    '(the session, with its URL to redirect to, will be the answer).',
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
