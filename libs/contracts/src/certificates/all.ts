import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every certificate of the organization (without private keys)',
  input: z.object({}),
  output: z.array(Unspecified),
  example: {},
});
