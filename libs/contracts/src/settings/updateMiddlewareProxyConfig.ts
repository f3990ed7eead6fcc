import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const updateMiddlewareProxyConfig = defineContract({
  method: 'POST',
  summary: 'Replace the shared middleware configuration of the reverse proxy',
  input: z.object({ proxyConfig: NonEmpty }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    proxyConfig: 'http:\n  middlewares:\n    redirect-to-https:\n      redirectScheme:\n        scheme: https\n',
  },
});
