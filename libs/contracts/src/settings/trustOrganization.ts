import { z } from 'zod';
import { defineContract } from '../contract.js';

export const trustOrganization = defineContract({
  method: 'POST',
  summary: 'Trust an organization with host privileges on the platform host',
  description:
    'The platform host runs every organization\'s compose stacks, so a stack ' +
    'there may not use what gives root on the host (`privileged`, `cap_add`, host namespaces, ' +
    '`devices`, `security_opt`, host paths in bind mounts, `env_file`, `configs` and `secrets`, ' +
    'the Docker socket): compose.create, update, import, deployTemplate and deploy answer ' +
    'BAD_REQUEST naming `composeFile` and the service. `trusted: true` lets the organization ' +
    'use them there; `false` takes it back (for the next save or deploy). Platform ' +
    'administrators only (FORBIDDEN otherwise); an unknown organization is NOT_FOUND. A remote ' +
    "server belongs to one organization, whose stacks may use them there.",
  input: z.object({
    organizationId: z.string().min(1),
    trusted: z.boolean(),
  }),
  output: z.object({ organizationId: z.string(), trusted: z.boolean() }),
  access: { role: 'admin' },
  extension: true,
  example: { organizationId: 'org_01', trusted: true },
});
