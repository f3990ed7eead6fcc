import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const readMiddlewareProxyConfig = defineContract({
  method: 'GET',
  summary: 'The shared middleware configuration of the reverse proxy',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
