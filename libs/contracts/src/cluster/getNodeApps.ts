import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getNodeApps = defineContract({
  method: 'GET',
  summary: 'The cluster services running on the cluster, with the nodes of their tasks',
  input: z.object({ serverId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToContainer' },
  example: {},
});
