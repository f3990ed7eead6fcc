import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const stop = defineContract({
  method: 'POST',
  summary: 'Stop the cache instance',
  description:
    'Queues the stop of its service (scaled to 0; data and settings kept); `applicationStatus` ' +
    'becomes `idle` once no task runs. BAD_REQUEST when it was never deployed. Answers the command it queued (`commandId`; follow it with `command.one`).',
  input: z.object({ cacheId: RequiredId }),
  output: QueuedCommand,
  example: { cacheId: 'cch_example' },
});
