import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const cleanMonitoring = defineContract({
  method: 'POST',
  summary: 'Delete the stored server and container monitoring data',
  input: z.object({}),
  output: Empty,
  access: { role: 'admin' },
  example: {},
});
