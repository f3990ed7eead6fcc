import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { ComposeRecord } from './record.js';

export const move = defineContract({
  method: 'POST',
  summary: 'Move a compose stack to another environment',
  description:
    'The target is an environment of the same organization that the caller may see (any ' +
    'project); the stack keeps its server, appName and settings. Answers the moved stack.',
  input: z.object({ composeId: Id, targetEnvironmentId: Id }),
  output: ComposeRecord,
  example: { composeId: 'cmp_example', targetEnvironmentId: 'env_example' },
});
