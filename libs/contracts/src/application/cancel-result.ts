import { z } from 'zod';

/** What `cancelDeployment`, `killBuild` and `cleanQueues` stopped or removed. */
export const CancelResult = z.object({
  deploymentIds: z
    .array(z.string())
    .describe(
      'The deployments cancelled. One that had not reached its server yet (or waited in its queue) is ' +
        '`cancelled` at once; a running one is stopped by its agent and shows `cancelled` within seconds.',
    ),
});
