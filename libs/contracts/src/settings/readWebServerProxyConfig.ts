import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const readWebServerProxyConfig = defineContract({
  method: 'GET',
  summary: 'The reverse-proxy routing configuration of the platform web server',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
