import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { GeneratedDomain } from './record.js';

export const generateDomain = defineContract({
  method: 'POST',
  summary: 'Make up a free host name for a workload from the server IP',
  description:
    'Answers `<appName>-<6 hex>-<server IPv4 with dots as dashes>.sslip.io` for the server ' +
    '`serverId` (absent or empty: the platform host, whose public address is configured with ' +
    '`SKIFF_PUBLIC_IP`); nothing is stored. `appName` is lower-cased and shortened to keep a ' +
    'valid DNS label. BAD_REQUEST when the server has no public IPv4 address ' +
    '(see `canGenerateProxyMeDomains`).',
  input: z.object({ appName: z.string(), serverId: Id.optional() }),
  output: GeneratedDomain,
  example: { appName: 'shop-web', serverId: 'srv_example' },
});
