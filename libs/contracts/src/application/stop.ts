import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const stop = defineContract({
  method: 'POST',
  summary: 'Stop the application',
  description:
    "Queues a stop on the application's server, after any deploy or command queued before it, " +
    'and answers the command it queued (`commandId`; follow it with `command.one`). The agent scales the Swarm service to 0 replicas (a global service gets a ' +
    'placement no node matches), keeping its settings and the replica count for `start`. When no ' +
    'task runs any more, `applicationStatus` becomes `idle`; if the stop fails or its deadline (30 ' +
    "minutes) passes first, it becomes `error`. An application that was never deployed, or is being " +
    'deleted, is BAD_REQUEST.',
  input: z.object({ applicationId: RequiredId }),
  output: QueuedCommand,
  example: { applicationId: 'app_example' },
});
