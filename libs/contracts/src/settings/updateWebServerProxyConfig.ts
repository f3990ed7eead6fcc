import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const updateWebServerProxyConfig = defineContract({
  method: 'POST',
  summary: 'Replace the reverse-proxy routing configuration of the platform web server',
  input: z.object({ proxyConfig: NonEmpty }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    proxyConfig: 'http:\n  routers:\n    skiff:\n      rule: Host(`skiff.example.com`)\n',
  },
});
