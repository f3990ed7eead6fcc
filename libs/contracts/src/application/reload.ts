import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AppName, Id } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const reload = defineContract({
  method: 'POST',
  summary: 'Restart the running application without rebuilding it',
  description:
    "Queues a restart on the application's server, after any deploy or command queued before it, " +
    "and answers the command it queued (`commandId`; follow it with `command.one`). The agent replaces every task of the Swarm service with the same settings " +
    "(a forced update, rolling as the application's update config says: start-first by default), " +
    'and waits until the new tasks run. `applicationStatus` stays as it is, or becomes `error` if ' +
    'a new task fails, the engine rolls back, or the deadline (30 minutes) passes. A stopped ' +
    'application stays stopped. `appName` must be the application\'s own. An application that ' +
    'was never deployed, or is being deleted, is BAD_REQUEST.',
  input: z.object({ appName: AppName, applicationId: Id }),
  output: QueuedCommand,
  example: { appName: 'shop-frontend', applicationId: 'app_example' },
});
