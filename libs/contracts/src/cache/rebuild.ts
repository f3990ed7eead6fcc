import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const rebuild = defineContract({
  method: 'POST',
  summary: 'Recreate the cache instance from its image, keeping its data',
  description:
    'Queues the removal of its Swarm service (the data volume is kept) and a deploy of its ' +
    'current settings: a new service and container on the same data. `applicationStatus` is ' +
    '`running` until the new task runs (`done`) or fails (`error`). Answers the command it queued (`commandId`; follow it with `command.one`).',
  input: z.object({ cacheId: Id }),
  output: QueuedCommand,
  example: { cacheId: 'cch_example' },
});
