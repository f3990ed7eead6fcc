import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every notification of the organization, with their channel records',
  input: z.object({}),
  output: z.array(Unspecified),
  example: {},
});
