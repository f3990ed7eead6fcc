import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerItem } from './container-item.js';
import { ComposeType, ContainerRef, Id } from '../primitives.js';

export const getContainersByAppNameMatch = defineContract({
  method: 'GET',
  summary: 'The containers whose name starts with an app name',
  description:
    '`appType` stack matches the containers of a cluster stack, container-compose those of ' +
    'a compose project; absent, any container whose name starts with `appName`.',
  input: z.object({
    appType: ComposeType.optional(),
    appName: ContainerRef,
    serverId: Id.optional(),
  }),
  output: z.array(ContainerItem),
  access: { grant: 'canAccessToContainer' },
  example: { appType: 'container-compose', appName: 'shop-stack' },
});
