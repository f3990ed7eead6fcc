import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const validateDomain = defineContract({
  method: 'POST',
  summary: 'Check that a host name resolves to the server that will serve it',
  description:
    'Compares the DNS answers for `domain` with the IP address of `serverId` (default: the ' +
    'platform host).',
  input: z.object({ domain: z.string(), serverId: Id.optional() }),
  output: Unspecified,
  example: { domain: 'shop.example.com' },
});
