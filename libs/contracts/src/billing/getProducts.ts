import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BillingProducts } from './record.js';

export const getProducts = defineContract({
  method: 'GET',
  summary: 'The products and prices the operator offers',
  description:
    'From the platform configuration (`SKIFF_BILLING_PRODUCTS`, a JSON list of products); an ' +
    'empty list when none are configured. `paymentProviderConfigured` says whether a payment ' +
    'provider key is set.',
  input: z.object({}),
  output: BillingProducts,
  example: {},
});
