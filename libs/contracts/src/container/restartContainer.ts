import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerRef, Empty, Id } from '../primitives.js';

export const restartContainer = defineContract({
  method: 'POST',
  summary: 'Restart a container',
  input: z.object({ containerId: ContainerRef, serverId: Id.optional() }),
  output: Empty,
  access: { grant: 'canAccessToContainer' },
  example: { containerId: '3f4e2a1b9c8d' },
});
