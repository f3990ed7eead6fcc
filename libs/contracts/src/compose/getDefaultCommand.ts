import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const getDefaultCommand = defineContract({
  method: 'GET',
  summary: 'The command used to deploy the stack',
  input: z.object({ composeId: RequiredId }),
  output: Unspecified,
  example: { composeId: 'cmp_example' },
});
