import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getBackups = defineContract({
  method: 'GET',
  summary: 'The platform backups the caller can see',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
