import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getTags = defineContract({
  method: 'GET',
  summary: 'The tags used by the templates of a template catalog',
  description:
    'Query parameter: `baseUrl`, the catalog to read (omitted: ' +
    'the catalog shipped with the platform, with the operator\'s `SKIFF_TEMPLATES_URL` catalog ' +
    'when set; see compose.templates). Answers each tag once, lower-case, sorted.',
  input: z.object({ baseUrl: z.string().optional() }),
  output: z.array(z.string()),
  example: {},
});
