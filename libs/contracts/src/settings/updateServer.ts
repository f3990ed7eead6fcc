import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const updateServer = defineContract({
  method: 'POST',
  summary: 'Update the platform to the latest available version',
  input: z.object({}),
  output: Empty,
  access: { role: 'admin' },
  example: {},
});
