import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ServerRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a server',
  description:
    'Refused (BAD_REQUEST naming `serverId`) while applications, compose stacks or cache ' +
    'instances are on it: move or delete them first. Certificates recorded for the server ' +
    'go with it. Answers the removed record.',
  input: z.object({ serverId: RequiredId }),
  output: ServerRecord,
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example' },
});
