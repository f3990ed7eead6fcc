import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const updateProxyConfig = defineContract({
  method: 'POST',
  summary: 'Replace the main configuration file of the reverse proxy',
  input: z.object({ proxyConfig: NonEmpty }),
  output: Empty,
  access: { role: 'admin' },
  example: { proxyConfig: 'entryPoints:\n  web:\n    address: ":80"\n' },
});
