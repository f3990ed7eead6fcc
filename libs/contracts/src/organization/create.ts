import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { OrganizationWithRole } from '../records.js';
export const create = defineContract({
  method: 'POST',
  summary: 'Create an organization; the caller becomes its owner',
  input: z.object({ name: NonEmpty, logo: z.string().optional() }),
  output: OrganizationWithRole,
  access: { role: 'admin' },
  example: { name: 'Acme', logo: 'https://example.com/logo.png' },
});
