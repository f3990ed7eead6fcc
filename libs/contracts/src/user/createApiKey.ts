import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApiKeyScope, NewApiKey } from '../records.js';

export const createApiKey = defineContract({
  method: 'POST',
  summary: 'Create an API key bound to an organization the caller belongs to',
  input: z.object({
    name: z.string().min(1).max(32),
    metadata: z.object({ organizationId: z.string() }).optional(),
    expiresAt: z.iso.datetime({ offset: true }).optional().describe('when the key stops working (ISO-8601, in the future); none: never'),
    scope: ApiKeyScope.optional(),
  }),
  output: NewApiKey,
  description:
    'Without `metadata.organizationId` the key acts in the current organization. The key is ' +
    'shown only in this answer; it is stored as a hash. Optional: `expiresAt` ' +
    '(an expired key answers UNAUTHORIZED) and `scope`, which narrows the creator\'s own access, ' +
    'never widens it: `readOnly`, and `projectIds` / `serverIds` (each list limits that kind of ' +
    'record to the ids named; a key with either acts with the member role at most). A scope must ' +
    'lie within what the caller may reach (FORBIDDEN naming the field otherwise); a key with a ' +
    'scope or an expiry makes only keys at least as narrow, in its own organization.',
  example: { name: 'ci-deploys', metadata: { organizationId: 'org_example' } },
});
