import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getNodes = defineContract({
  method: 'GET',
  summary: 'The nodes of the cluster a server belongs to',
  description: '`serverId` picks a remote server; absent, the platform host.',
  input: z.object({ serverId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToContainer' },
  example: { serverId: 'srv_example' },
});
