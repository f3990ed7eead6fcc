import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getReleaseTag = defineContract({
  method: 'GET',
  summary: 'The release tag (channel) the running platform was built from',
  input: z.object({}),
  output: z.object({ tag: z.string() }),
  example: {},
});
