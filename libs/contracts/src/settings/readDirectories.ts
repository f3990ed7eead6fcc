import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const readDirectories = defineContract({
  method: 'GET',
  summary: 'The tree of reverse-proxy configuration files and directories',
  description:
    'The spec only says query parameters exist; `serverId` (optional) picks the remote ' +
    'server whose proxy files are listed, and without it the host running the platform is used.',
  input: z.object({ serverId: z.string().optional() }),
  output: Unspecified,
  access: { grant: 'canAccessToProxyFiles' },
  example: { serverId: 'srv_example' },
});
