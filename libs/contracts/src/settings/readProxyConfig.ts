import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const readProxyConfig = defineContract({
  method: 'GET',
  summary: 'The main configuration file of the reverse proxy',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
