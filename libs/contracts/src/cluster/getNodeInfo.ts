import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getNodeInfo = defineContract({
  method: 'GET',
  summary: 'The inspected details of a cluster node',
  input: z.object({ nodeId: Id, serverId: Id.optional() }),
  output: Unspecified,
  access: { grant: 'canAccessToContainer' },
  example: { nodeId: 'w1k3mz0x9q7b2c4d5e6f7g8h9', serverId: 'srv_example' },
});
