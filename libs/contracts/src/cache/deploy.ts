import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, Id } from '../primitives.js';

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
    'BAD_REQUEST; an instance being removed is BAD_REQUEST.',
  input: z.object({ cacheId: Id }),
  output: Empty,
  example: { cacheId: 'cch_example' },
});
