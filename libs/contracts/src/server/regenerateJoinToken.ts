import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { z } from 'zod';
import { ServerWithJoin } from './record.js';

export const regenerateJoinToken = defineContract({
  method: 'POST',
  summary: "Issue a new one-time join token for a server's agent",
  description:
    'Replaces any unused token (it stops working) and answers the new one once, with the join ' +
    "command. An agent that joins with it receives a new credential, which replaces the server's " +
    'current one: use it to re-join a server whose agent lost its data directory, or to rotate the ' +
    'credential. The token expires after 24 hours.',
  input: z.object({ serverId: RequiredId }),
  output: ServerWithJoin,
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example' },
});
