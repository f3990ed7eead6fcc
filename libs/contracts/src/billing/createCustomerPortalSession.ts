import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const createCustomerPortalSession = defineContract({
  method: 'POST',
  summary: "Open the payment provider's customer portal for the organization",
  description:
    'Answers the session (its URL to redirect to); BAD_REQUEST when no payment provider key ' +
    'is configured or the organization has no customer yet.',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
