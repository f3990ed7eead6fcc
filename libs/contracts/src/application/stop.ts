import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const stop = defineContract({
  method: 'POST',
  summary: 'Stop the application',
  description:
    "Queues a stop on the application's server, after any deploy or command queued before it, " +
    'and answers `{}`. The agent scales the Swarm service to 0 replicas (a global service gets a ' +
    'placement no node matches), keeping its settings and the replica count for `start`. When no ' +
    'task runs any more, `applicationStatus` becomes `idle`; if the stop fails or its deadline (30 ' +
    "minutes) passes first, it becomes `error`. An application that was never deployed, or is being " +
    'deleted, is BAD_REQUEST.',
  input: z.object({ applicationId: RequiredId }),
  output: Empty,
  example: { applicationId: 'app_example' },
});
