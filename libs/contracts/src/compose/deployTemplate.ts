import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { deploy } from './deploy.js';
import { TemplateStack } from './import.js';

export const deployTemplate = defineContract({
  method: 'POST',
  summary: 'Create a compose stack from a catalog template and deploy it',
  description:
    '`id` is the template id in the catalog (see compose.templates). Fields beyond the spec: ' +
    '`serverId` (the server to deploy on; omitted: the platform host) and `baseUrl` (the template ' +
    'catalog to read; omitted: the catalog shipped with the platform, with the operator\'s ' +
    '`SKIFF_TEMPLATES_URL` catalog when set). The stack is named after the template, its ' +
    "`appName` derived from that name; the template's helpers produce fresh passwords, hashes " +
    'and domains at creation, and its compose file, env and domains are stored as compose.import ' +
    'stores them. Then its deploy is queued as compose.deploy queues it (`deployment`: what ' +
    'compose.deploy answers; null where stack deploys are not available). Nothing stays behind ' +
    'when a step fails: an unknown id or a template that cannot be processed is BAD_REQUEST ' +
    'naming `id`, a catalog that cannot be read names `baseUrl`.',
  input: z.object({
    environmentId: Id,
    id: Id,
    serverId: z.string().optional(),
    baseUrl: z.string().optional(),
  }),
  output: TemplateStack.extend({ deployment: deploy.output.nullable() }),
  access: { grant: 'canCreateServices' },
  example: { environmentId: 'env_example', id: 'plausible' },
});
