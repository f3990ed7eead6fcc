import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AppName, Id, NonEmpty } from '../primitives.js';
import { CacheRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Create a cache instance in an environment',
  description:
    '`databasePassword` (not empty) is write-only: encrypted at rest, never returned. `appName` ' +
    '(derived from `name` with a random suffix when omitted) is unique on its server across ' +
    'applications, compose stacks and cache instances. `containerImage` is an image reference.',
  input: z.object({
    name: NonEmpty,
    appName: AppName.optional(),
    databasePassword: z.string(),
    containerImage: z.string().default('redis:8'),
    environmentId: Id,
    description: z.string().nullable().optional(),
    serverId: z.string().nullable().optional(),
  }),
  output: CacheRecord,
  access: { grant: 'canCreateServices' },
  example: {
    name: 'Sessions',
    appName: 'shop-sessions',
    databasePassword: 'c7f2d9a41be84e0f',
    environmentId: 'env_example',
  },
});
