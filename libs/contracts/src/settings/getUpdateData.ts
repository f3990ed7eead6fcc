import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getUpdateData = defineContract({
  method: 'POST',
  summary: 'Check whether a newer platform version is available',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
