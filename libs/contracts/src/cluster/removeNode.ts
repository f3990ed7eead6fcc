import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { NodeId } from './join.js';

export const removeNode = defineContract({
  method: 'POST',
  summary: "Drain a node of a server's swarm, then remove it",
  description:
    "The node's tasks move to the other nodes first (availability `drain`); it is removed once none runs there (a manager is demoted first). The node the server's agent runs on cannot be removed. On the machine itself, `docker swarm leave` ends its membership.",
  input: z.object({ serverId: RequiredId, nodeId: NodeId }),
  output: z.object({ nodeId: z.string(), hostname: z.string(), movedTasks: z.number().int() }),
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example', nodeId: 'w1k3mz0x9q7b2c4d5e6f7g8h9' },
});
