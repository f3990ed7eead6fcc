import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { AppName, Id, NonEmpty, SourceType } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Create an application in an environment',
  input: z.object({
    name: NonEmpty,
    appName: AppName.optional(),
    description: z.string().nullable().optional(),
    environmentId: Id,
    serverId: z.string().nullable().optional(),
    sourceType: SourceType.optional(),
  }),
  output: ApplicationRecord,
  access: { grant: 'canCreateServices' },
  example: {
    name: 'Shop frontend',
    appName: 'shop-frontend',
    environmentId: 'env_example',
    sourceType: 'git',
  },
});
