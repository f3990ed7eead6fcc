import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerRef, Id, Unspecified } from '../primitives.js';

export const getStackContainersByAppName = defineContract({
  method: 'GET',
  summary: 'The containers (tasks) of a cluster stack',
  input: z.object({ appName: ContainerRef, serverId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToContainer' },
  example: { appName: 'shop-stack' },
});
