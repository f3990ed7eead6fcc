import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';

export const readProxyFile = defineContract({
  method: 'GET',
  summary: 'The content of one reverse-proxy configuration file',
  input: z.object({ path: NonEmpty }),
  output: Unspecified,
  access: { grant: 'canAccessToProxyFiles' },
  example: { path: '/etc/skiff/proxy/dynamic/app_example.yml' },
});
