import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getTags = defineContract({
  method: 'GET',
  summary: 'The tags used by the templates of a template catalog',
  description:
    'Query parameter (the spec does not name it): `baseUrl`, the catalog to read (omitted: ' +
    'the catalog shipped with the platform).',
  input: z.object({ baseUrl: z.string().optional() }),
  output: Unspecified,
  example: {},
});
