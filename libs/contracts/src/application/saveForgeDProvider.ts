import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Branch, Id } from '../primitives.js';

export const saveForgeDProvider = defineContract({
  method: 'POST',
  summary: 'Use a forgeD (Gitea or Forgejo) repository as the source of the application',
  input: z.object({
    applicationId: Id,
    forgeDBuildPath: z.string().nullable(),
    forgeDOwner: z.string().nullable(),
    forgeDRepository: z.string().nullable(),
    forgeDId: z.string().nullable(),
    forgeDBranch: Branch,
    enableSubmodules: z.boolean().optional(),
    watchPaths: z.array(z.string()).nullable().optional(),
  }),
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    forgeDBuildPath: '/',
    forgeDOwner: 'acme',
    forgeDRepository: 'shop',
    forgeDId: 'fgd_example',
    forgeDBranch: 'main',
  },
});
