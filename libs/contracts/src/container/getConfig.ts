import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerRef, Id, Unspecified } from '../primitives.js';

export const getConfig = defineContract({
  method: 'GET',
  summary: "A container's inspected configuration",
  input: z.object({ containerId: ContainerRef, serverId: Id.optional() }),
  output: Unspecified,
  access: { grant: 'canAccessToContainer' },
  example: { containerId: 'shop-web-1' },
});
