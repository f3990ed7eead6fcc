import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { ServerRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: "Change a server's name, address or description",
  description: 'Changes the fields given; `address` rules as in `server.create`.',
  input: z.object({
    serverId: RequiredId,
    name: NonEmpty.optional(),
    address: NonEmpty.optional(),
    description: z.string().nullable().optional(),
  }),
  output: ServerRecord,
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example', name: 'worker-1', description: 'Web workloads only' },
});
