import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Branch, Id, TriggerType } from '../primitives.js';

export const saveForgeAProvider = defineContract({
  method: 'POST',
  summary: 'Use a forgeA (GitHub) repository as the source of the application',
  input: z.object({
    applicationId: Id,
    repository: z.string().nullable(),
    owner: z.string().nullable(),
    buildPath: z.string().nullable(),
    forgeAId: z.string().nullable(),
    branch: Branch,
    triggerType: TriggerType.default('push'),
    enableSubmodules: z.boolean().optional(),
    watchPaths: z.array(z.string()).nullable().optional(),
  }),
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    repository: 'shop',
    owner: 'acme',
    buildPath: '/',
    forgeAId: 'fga_example',
    branch: 'main',
    triggerType: 'push',
    watchPaths: ['src/**'],
  },
});
