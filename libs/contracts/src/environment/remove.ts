import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { EnvironmentRecord, RemovalSummary } from '../records.js';

export const remove = defineContract({
  method: 'POST',
  summary: "Remove an environment with its services (not a project's last environment)",
  input: z.object({ environmentId: RequiredId }),
  output: z.object({ environment: EnvironmentRecord, removed: RemovalSummary }),
  access: { grant: 'canDeleteEnvironments' },
  example: { environmentId: 'env_example' },
});
