import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { EnvironmentRecord } from '../records.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change an environment; `projectId` moves it to another project of the organization',
  input: z.object({
    environmentId: RequiredId,
    name: NonEmpty.optional(),
    description: z.string().optional(),
    projectId: z.string().optional(),
    env: z.string().optional(),
  }),
  output: EnvironmentRecord,
  example: { environmentId: 'env_example', env: 'LOG_LEVEL=debug' },
});
