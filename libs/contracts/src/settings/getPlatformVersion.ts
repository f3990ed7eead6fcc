import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getPlatformVersion = defineContract({
  method: 'GET',
  summary: 'The version of the running platform',
  input: z.object({}),
  output: z.object({ version: z.string() }),
  example: {},
});
