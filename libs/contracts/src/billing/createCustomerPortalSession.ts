import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const createCustomerPortalSession = defineContract({
  method: 'POST',
  summary: "Open the payment provider's customer portal for the organization",
  description:
    'Answers BAD_REQUEST ("no payment provider is configured") when no provider key is set ' +
    '(`SKIFF_BILLING_API_KEY`). With a key set it answers NOT_IMPLEMENTED for now: talking to ' +
    'the payment provider is not built yet (the session, with its URL to redirect to, will ' +
    'be the answer).',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
