import { z } from 'zod';
import { defineContract } from '../contract.js';


export const haveRootAccess = defineContract({
  method: 'GET',
  summary: 'Whether the caller administers the platform itself (the first owner)',
  input: z.object({}),
  output: z.object({ haveRootAccess: z.boolean() }),
  example: {},
});
