import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerItem } from './container-item.js';
import { ContainerRef, Id } from '../primitives.js';

export const getStackContainersByAppName = defineContract({
  method: 'GET',
  summary: 'The containers (tasks) of a cluster stack',
  input: z.object({ appName: ContainerRef, serverId: Id.optional() }),
  output: z.array(ContainerItem),
  access: { grant: 'canAccessToContainer' },
  example: { appName: 'shop-stack' },
});
