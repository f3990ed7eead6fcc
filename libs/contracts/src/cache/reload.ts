import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AppName, Id } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const reload = defineContract({
  method: 'POST',
  summary: 'Restart the cache instance',
  description:
    'Queues a restart of its task with the same settings (a new container, same data); ' +
    '`appName` must be the instance\'s own (BAD_REQUEST naming appName otherwise). A stopped ' +
    'instance stays stopped. BAD_REQUEST when it was never deployed. Answers the command it queued (`commandId`; follow it with `command.one`).',
  input: z.object({ cacheId: Id, appName: AppName }),
  output: QueuedCommand,
  example: { cacheId: 'cch_example', appName: 'shop-sessions' },
});
