import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerItem } from './container-item.js';
import { ContainerRef, Id } from '../primitives.js';

export const getContainersByAppLabel = defineContract({
  method: 'GET',
  summary: 'The containers labelled with an app name',
  description:
    '`type` standalone matches containers started directly on the engine, cluster those ' +
    'started as tasks of a cluster service.',
  input: z.object({
    appName: ContainerRef,
    serverId: Id.optional(),
    type: z.enum(['standalone', 'cluster']),
  }),
  output: z.array(ContainerItem),
  access: { grant: 'canAccessToContainer' },
  example: { appName: 'shop-web', type: 'standalone' },
});
