import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ServerRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A server of the organization',
  description: 'Members may read the servers in their `accessedServers`.',
  input: z.object({ serverId: RequiredId }),
  output: ServerRecord,
  extension: true,
  example: { serverId: 'srv_example' },
});
