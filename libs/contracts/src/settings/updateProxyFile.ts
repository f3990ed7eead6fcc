import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const updateProxyFile = defineContract({
  method: 'POST',
  summary: 'Replace the content of one reverse-proxy configuration file',
  input: z.object({ path: NonEmpty, proxyConfig: NonEmpty }),
  output: Empty,
  access: { grant: 'canAccessToProxyFiles' },
  example: {
    path: '/etc/skiff/proxy/dynamic/app_example.yml',
    proxyConfig: 'http:\n  routers:\n    app-example:\n      rule: Host(`app.example.com`)\n',
  },
});
