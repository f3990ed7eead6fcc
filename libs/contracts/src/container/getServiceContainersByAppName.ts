import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerRef, Id, Unspecified } from '../primitives.js';

export const getServiceContainersByAppName = defineContract({
  method: 'GET',
  summary: 'The containers (tasks) of a cluster service',
  input: z.object({ appName: ContainerRef, serverId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToContainer' },
  example: { appName: 'shop-web' },
});
