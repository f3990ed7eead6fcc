import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ProjectWithEnvironments, ServiceKind } from '../records.js';

export const duplicate = defineContract({
  method: 'POST',
  summary: 'Copy an environment, with its services, into a new project or the same project',
  description:
    'With `duplicateInSameProject` false (the default) a new project named `name` is created ' +
    'holding a copy of the source environment; with true, the copy is a new environment named ' +
    '`name` in the source project. `includeServices` (default true) copies the services; ' +
    '`selectedServices`, when given, limits the copy to those services of the source ' +
    'environment. Copies get fresh ids and app names and start `idle`.',
  input: z.object({
    sourceEnvironmentId: z.string(),
    name: z.string(),
    description: z.string().optional(),
    includeServices: z.boolean().default(true),
    selectedServices: z
      .array(z.object({ id: NonEmpty, type: ServiceKind }))
      .optional()
      .describe('the services to copy: `{id, type}` with type application, compose or cache'),
    duplicateInSameProject: z.boolean().default(false),
  }),
  output: ProjectWithEnvironments,
  example: { sourceEnvironmentId: 'env_example', name: 'shop-staging' },
});
