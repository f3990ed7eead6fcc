import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getIp = defineContract({
  method: 'GET',
  summary: 'The public IP address of the host',
  input: z.object({}),
  output: Unspecified,
  example: {},
});
