import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerRef, Id, Unspecified } from '../primitives.js';

export const getConfig = defineContract({
  method: 'GET',
  summary: "A container's inspected configuration",
  description: "The engine's inspect document of one of the caller's containers; environment values are replaced by `<redacted>`.",
  input: z.object({ containerId: ContainerRef, serverId: Id.optional() }),
  output: Unspecified,
  access: { grant: 'canAccessToContainer' },
  example: { containerId: 'shop-web-1' },
});
