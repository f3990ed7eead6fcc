import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Branch, Id } from '../primitives.js';

export const saveGitProvider = defineContract({
  method: 'POST',
  summary: 'Use a plain git repository (HTTPS or SSH) as the source of the application',
  input: z.object({
    applicationId: Id,
    customGitBuildPath: z.string().nullable(),
    customGitUrl: z.string().nullable(),
    watchPaths: z.array(z.string()).nullable(),
    enableSubmodules: z.boolean().optional(),
    customGitBranch: Branch,
    customGitSSHKeyId: z.string().nullable().optional(),
  }),
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    customGitBuildPath: '/',
    customGitUrl: 'https://git.example.com/acme/shop.git',
    watchPaths: null,
    customGitBranch: 'main',
  },
});
