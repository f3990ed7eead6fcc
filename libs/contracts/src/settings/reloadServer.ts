import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const reloadServer = defineContract({
  method: 'POST',
  summary: 'Restart the platform service on the host',
  input: z.object({}),
  output: Empty,
  access: { role: 'admin' },
  example: {},
});
