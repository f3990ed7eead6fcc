import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NewApiKey } from '../records.js';

export const createApiKey = defineContract({
  method: 'POST',
  summary: 'Create an API key bound to an organization the caller belongs to',
  input: z.object({
    name: z.string().min(1).max(32),
    metadata: z.object({ organizationId: z.string() }).optional(),
  }),
  output: NewApiKey,
  description:
    'Without `metadata.organizationId` the key acts in the current organization. The key is ' +
    'shown only in this answer; it is stored as a hash.',
  example: { name: 'ci-deploys', metadata: { organizationId: 'org_example' } },
});
