import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const updateContainerCleanup = defineContract({
  method: 'POST',
  summary: 'Turn the scheduled daily container cleanup on or off',
  input: z.object({ enableContainerCleanup: z.boolean() }),
  output: Empty,
  access: { role: 'admin' },
  example: { enableContainerCleanup: true },
});
