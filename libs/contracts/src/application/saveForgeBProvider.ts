import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Branch, Id } from '../primitives.js';

export const saveForgeBProvider = defineContract({
  method: 'POST',
  summary: 'Use a forgeB (GitLab) project as the source of the application',
  input: z.object({
    applicationId: Id,
    forgeBBuildPath: z.string().nullable(),
    forgeBOwner: z.string().nullable(),
    forgeBRepository: z.string().nullable(),
    forgeBId: z.string().nullable(),
    forgeBProjectId: z.number().nullable(),
    forgeBPathNamespace: z.string().nullable(),
    forgeBBranch: Branch,
    enableSubmodules: z.boolean().optional(),
    watchPaths: z.array(z.string()).nullable().optional(),
  }),
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    forgeBBuildPath: '/',
    forgeBOwner: 'acme',
    forgeBRepository: 'shop',
    forgeBId: 'fgb_example',
    forgeBProjectId: 4211,
    forgeBPathNamespace: 'acme/shop',
    forgeBBranch: 'main',
  },
});
