import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { QueuedCommand } from '../command/record.js';

export const deploy = defineContract({
  method: 'POST',
  summary: 'Deploy the cache instance',
  description:
    'Queues the rollout of the instance as it is configured now, on its server: a Swarm ' +
    'service named `appName` running `containerImage` with `requirepass` set from ' +
    '`databasePassword` (passed in the variable `REDIS_PASSWORD`, which replaces one of that name ' +
    'in `env`), its data in a named volume mounted at `/data` (kept across deploys and ' +
    '`cache.rebuild`), `externalPort` published on the host (host mode), its resources, ' +
    '`*Cluster` values and networks. `applicationStatus` is `running` until the agent reports ' +
    'the new task running (`done`) or failing (`error`). Settings the engine would refuse are ' +
    'BAD_REQUEST; an instance being removed is BAD_REQUEST. Answers the command it queued (`commandId`; follow it with `command.one`).',
  input: z.object({ cacheId: Id }),
  output: QueuedCommand,
  example: { cacheId: 'cch_example' },
});
