import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerItem } from './container-item.js';
import { Id } from '../primitives.js';

export const getContainers = defineContract({
  method: 'GET',
  summary: 'Every container of the container engine of a server',
  description:
    '`serverId` picks a remote server; absent, the platform host. Answered live by the server\'s agent; ' +
    'only the containers of the caller\'s workloads (Skiff labels), a member only those of the services granted.',
  input: z.object({ serverId: Id.optional() }),
  output: z.array(ContainerItem),
  access: { grant: 'canAccessToContainer' },
  example: { serverId: 'srv_example' },
});
