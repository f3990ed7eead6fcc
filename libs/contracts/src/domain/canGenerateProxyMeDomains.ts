import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { ProxyMeDomainsAvailability } from './record.js';

export const canGenerateProxyMeDomains = defineContract({
  method: 'GET',
  summary: 'Whether a server has a public IPv4 address for generated domains',
  description:
    'An empty `serverId` means the platform host, whose public address is configured ' +
    '(`SKIFF_PUBLIC_IP`). A server qualifies when its address is a public IPv4 address (not ' +
    'private, loopback, link-local, documentation or otherwise reserved).',
  input: z.object({ serverId: Id }),
  output: ProxyMeDomainsAvailability,
  example: { serverId: 'srv_example' },
});
