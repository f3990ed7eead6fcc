import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ServerRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'The servers of the organization the caller may use',
  description: 'Oldest first: every one for owners and admins; for members, those in their `accessedServers`.',
  input: z.object({}),
  output: z.array(ServerRecord),
  extension: true,
  example: {},
});
