import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the services of the stack',
  description:
    "Queues a start on the stack's server after any job queued before it and answers the command it queued (`commandId`; follow it with `command.one`); the " +
    'agent starts the stopped services with their last deployed configuration, and ' +
    '`applicationStatus` becomes `done` (`error` when it fails). A stack that was never deployed, or is ' +
    'being deleted, is BAD_REQUEST.',
  input: z.object({ composeId: RequiredId }),
  output: QueuedCommand,
  example: { composeId: 'cmp_example' },
});
