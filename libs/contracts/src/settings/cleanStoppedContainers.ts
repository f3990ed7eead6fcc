import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const cleanStoppedContainers = defineContract({
  method: 'POST',
  summary: 'Remove stopped containers',
  description:
    'The spec shows a body without fields; `serverId` (optional) picks the remote server to ' +
    'clean, and without it the host running the platform is cleaned.',
  input: z.object({ serverId: z.string().optional() }),
  output: Empty,
  access: { role: 'admin' },
  example: { serverId: 'srv_example' },
});
