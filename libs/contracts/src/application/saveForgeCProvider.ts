import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Branch, Id } from '../primitives.js';

export const saveForgeCProvider = defineContract({
  method: 'POST',
  summary: 'Use a forgeC (Bitbucket) repository as the source of the application',
  input: z.object({
    forgeCBuildPath: z.string().nullable(),
    forgeCOwner: z.string().nullable(),
    forgeCRepository: z.string().nullable(),
    forgeCRepositorySlug: z.string().nullable(),
    forgeCId: z.string().nullable(),
    applicationId: Id,
    forgeCBranch: Branch,
    enableSubmodules: z.boolean().optional(),
    watchPaths: z.array(z.string()).nullable().optional(),
  }),
  output: ApplicationRecord,
  example: {
    forgeCBuildPath: '/',
    forgeCOwner: 'acme',
    forgeCRepository: 'Shop',
    forgeCRepositorySlug: 'shop',
    forgeCId: 'fgc_example',
    applicationId: 'app_example',
    forgeCBranch: 'main',
  },
});
