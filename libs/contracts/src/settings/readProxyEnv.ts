import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const readProxyEnv = defineContract({
  method: 'GET',
  summary: 'The environment variables of the reverse-proxy container',
  description:
    'The spec only says query parameters exist; `serverId` (optional) picks the remote ' +
    'server whose proxy is read, and without it the host running the platform is used.',
  input: z.object({ serverId: z.string().optional() }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
