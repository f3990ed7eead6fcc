import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BillingSession } from './record.js';

export const createCustomerPortalSession = defineContract({
  method: 'POST',
  summary: "Open the payment provider's customer portal for the organization",
  description:
    "Opens the provider's customer portal (Stripe's API shape) for the organization's " +
    'customer, kept from its completed checkout, and answers its id and the URL to send the ' +
    'user to. BAD_REQUEST ("no payment provider is configured") when no provider key is set ' +
    '(`SKIFF_BILLING_API_KEY`); BAD_REQUEST when the organization has no customer yet ' +
    "(no checkout completed) or the provider refuses (with the provider's message).",
  input: z.object({}),
  output: BillingSession,
  access: { role: 'admin' },
  example: {},
});
