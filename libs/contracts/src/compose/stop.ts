import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const stop = defineContract({
  method: 'POST',
  summary: 'Stop the services of the stack',
  description:
    "Queues a stop on the stack's server after any job queued before it and answers the command it queued (`commandId`; follow it with `command.one`); the agent " +
    'stops the containers (a Swarm stack: scales its services to 0), keeping their configuration and ' +
    'volumes, and `applicationStatus` becomes `idle` (`error` when it fails). A stack that was never ' +
    'deployed, or is being deleted, is BAD_REQUEST.',
  input: z.object({ composeId: RequiredId }),
  output: QueuedCommand,
  example: { composeId: 'cmp_example' },
});
