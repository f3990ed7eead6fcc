import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const deployTemplate = defineContract({
  method: 'POST',
  summary: 'Create a compose stack from a catalog template and deploy it',
  description:
    '`id` is the template id in the catalog. Fields beyond the spec: `serverId` (the server to ' +
    'deploy on; omitted: the platform host) and `baseUrl` (the template catalog to read; ' +
    "omitted: the catalog shipped with the platform). The template's helpers produce fresh " +
    'passwords, hashes and domains at creation.',
  input: z.object({
    environmentId: Id,
    id: Id,
    serverId: z.string().optional(),
    baseUrl: z.string().optional(),
  }),
  output: Unspecified,
  access: { grant: 'canCreateServices' },
  example: { environmentId: 'env_example', id: 'plausible' },
});
