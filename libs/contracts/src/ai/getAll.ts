import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getAll = defineContract({
  method: 'GET',
  summary: 'Every AI configuration of the organization',
  input: z.object({}),
  output: z.array(Unspecified),
  example: {},
});
