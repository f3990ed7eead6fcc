import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const templates = defineContract({
  method: 'GET',
  summary: 'The templates of a template catalog',
  description:
    'Query parameters (the spec does not name them): `baseUrl`, the catalog to read (omitted: ' +
    'the catalog shipped with the platform), and `tags`, repeated to list only templates ' +
    'carrying at least one of those tags (omitted: every template).',
  input: z.object({
    baseUrl: z.string().optional(),
    tags: z.array(z.string()).optional(),
  }),
  output: Unspecified,
  example: { tags: ['monitoring'] },
});
