import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { DomainValidation } from './record.js';

export const validateDomain = defineContract({
  method: 'POST',
  summary: 'Check that a host name resolves to the server that will serve it',
  description:
    'Resolves `domain` (a wildcard is checked through a name under it), with a short timeout, ' +
    'and answers whether the address of `serverId` (absent or empty: the platform host, ' +
    '`SKIFF_PUBLIC_IP`) is among the answers. DNS failures and timeouts are answers ' +
    '(`valid` false with the reason), not errors; a domain that is not a host name is ' +
    'BAD_REQUEST.',
  input: z.object({ domain: z.string(), serverId: Id.optional() }),
  output: DomainValidation,
  example: { domain: 'shop.example.com' },
});
