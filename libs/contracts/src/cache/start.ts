import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the cache instance',
  description:
    'Queues the start of its stopped service; `applicationStatus` becomes `done` once its task ' +
    'runs (`error` if it fails). BAD_REQUEST when it was never deployed. Answers the command it queued (`commandId`; follow it with `command.one`).',
  input: z.object({ cacheId: RequiredId }),
  output: QueuedCommand,
  example: { cacheId: 'cch_example' },
});
