import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const canGenerateProxyMeDomains = defineContract({
  method: 'GET',
  summary: 'Whether a server has a public IPv4 address for generated domains',
  input: z.object({ serverId: Id }),
  output: Unspecified,
  example: { serverId: 'srv_example' },
});
