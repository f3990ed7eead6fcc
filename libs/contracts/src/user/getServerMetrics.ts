import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getServerMetrics = defineContract({
  method: 'GET',
  summary: 'Recent host metrics of the platform server',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
