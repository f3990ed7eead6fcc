import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AppName, Id, NonEmpty, Unspecified } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Create a cache instance in an environment',
  input: z.object({
    name: NonEmpty,
    appName: AppName.optional(),
    databasePassword: z.string(),
    containerImage: z.string().default('redis:8'),
    environmentId: Id,
    description: z.string().nullable().optional(),
    serverId: z.string().nullable().optional(),
  }),
  output: Unspecified,
  access: { grant: 'canCreateServices' },
  example: {
    name: 'Sessions',
    appName: 'shop-sessions',
    databasePassword: 'c7f2d9a41be84e0f',
    environmentId: 'env_example',
  },
});
