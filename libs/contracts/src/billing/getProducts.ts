import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getProducts = defineContract({
  method: 'GET',
  summary: "The payment provider's products and prices, with the organization's subscription",
  description: 'Answers BAD_REQUEST when no payment provider key is configured.',
  input: z.object({}),
  output: Unspecified,
  example: {},
});
