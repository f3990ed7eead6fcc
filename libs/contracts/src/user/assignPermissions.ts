import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { Permissions } from '../records.js';

export const assignPermissions = defineContract({
  method: 'POST',
  summary: "Set a member's access lists and can* flags",
  input: z.object({
    id: NonEmpty,
    accessedProjects: z.array(z.string()).optional(),
    accessedEnvironments: z.array(z.string()).optional(),
    accessedServices: z.array(z.string()).optional(),
    accessedGitProviders: z.array(z.string()).optional(),
    accessedServers: z.array(z.string()).optional(),
    canCreateProjects: z.boolean().optional(),
    canCreateServices: z.boolean().optional(),
    canDeleteProjects: z.boolean().optional(),
    canDeleteServices: z.boolean().optional(),
    canAccessToContainer: z.boolean().optional(),
    canAccessToProxyFiles: z.boolean().optional(),
    canAccessToAPI: z.boolean().optional(),
    canAccessToSSHKeys: z.boolean().optional(),
    canAccessToGitProviders: z.boolean().optional(),
    canDeleteEnvironments: z.boolean().optional(),
    canCreateEnvironments: z.boolean().optional(),
  }),
  output: Permissions,
  access: { role: 'admin' },
  description:
    '`id` is the user id of a member of the current organization. Fields left out keep ' +
    'their value. Owners and admins hold every right whatever is stored here.',
  example: { id: 'usr_example', accessedProjects: ['prj_example'], canCreateServices: true },
});
