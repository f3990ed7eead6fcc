import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { deploy } from './deploy.js';
import { TemplateStack } from './import.js';

export const deployTemplate = defineContract({
  method: 'POST',
  summary: 'Create a compose stack from a catalog template and deploy it',
  description:
    '`id` is the template id in the catalog (see compose.templates). Optional fields: ' +
    '`serverId` (the server to deploy on; omitted: the platform host), `baseUrl` (the template ' +
    'catalog to read; omitted: the catalog shipped with the platform, with the operator\'s ' +
    '`SKIFF_TEMPLATES_URL` catalog when set) and `host` (the domain the template\'s `${domain}` ' +
    'and its domains without a host of their own use; omitted: a generated `sslip.io` domain). ' +
    'The stack is named after the template, its ' +
    "`appName` derived from that name; the template's helpers produce fresh passwords, hashes " +
    'and domains at creation, and its compose file, env and domains are stored as compose.import ' +
    'stores them. When no domain can be generated (the platform host has no public IPv4 address ' +
    'configured, `SKIFF_PUBLIC_IP`, or the server has none) and no `host` is sent, the template is ' +
    'deployed without the domains it would generate (`${domain}` reads `localhost`), and ' +
    '`warnings` says so. Then its deploy is queued as compose.deploy queues it (`deployment`: what ' +
    'compose.deploy answers; null where stack deploys are not available). Nothing stays behind ' +
    'when a step fails: an unknown id or a template that cannot be processed is BAD_REQUEST ' +
    'naming `id`, a catalog that cannot be read names `baseUrl`, a host that is not one names `host`.',
  input: z.object({
    environmentId: Id,
    id: Id,
    serverId: z.string().optional(),
    baseUrl: z.string().optional(),
    host: z.string().optional().describe('The domain for the template; omitted: a generated one'),
  }),
  output: TemplateStack.extend({
    deployment: deploy.output.nullable(),
    warnings: z.array(z.string()).describe('What the stack was deployed without, and why (e.g. no domain: set SKIFF_PUBLIC_IP or send `host`)'),
  }),
  access: { grant: 'canCreateServices' },
  example: { environmentId: 'env_example', id: 'plausible' },
});
