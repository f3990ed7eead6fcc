import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const generateDomain = defineContract({
  method: 'POST',
  summary: 'Make up a free host name for a workload from the server IP',
  description:
    'Answers `<appName>-<6 hex>-<server IPv4 with dots as dashes>.sslip.io` for the server ' +
    '`serverId` (default: the platform host); nothing is stored.',
  input: z.object({ appName: z.string(), serverId: Id.optional() }),
  output: Unspecified,
  example: { appName: 'shop-web', serverId: 'srv_example' },
});
