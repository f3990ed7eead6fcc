import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the stopped application from its last build',
  description:
    "Queues a start on the application's server, after any deploy or command queued before it, " +
    'and answers the command it queued (`commandId`; follow it with `command.one`). The agent scales the Swarm service back to the replica count it had when ' +
    'stopped (1 if none was kept) with its last deployed settings; nothing is built or pulled anew. ' +
    'When the tasks run, `applicationStatus` becomes `done`; if a task fails (the reason is the ' +
    "task's error), the service no longer exists, or the deadline (30 minutes) passes, it becomes " +
    '`error`. Starting a running application changes nothing. An application that was never ' +
    'deployed, or is being deleted, is BAD_REQUEST.',
  input: z.object({ applicationId: RequiredId }),
  output: QueuedCommand,
  example: { applicationId: 'app_example' },
});
