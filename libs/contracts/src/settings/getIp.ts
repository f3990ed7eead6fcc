import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getIp = defineContract({
  method: 'GET',
  summary: 'The public IP address of the host',
  description:
    'The address configured for the platform host (configuration `publicIp`, environment ' +
    '`SKIFF_PUBLIC_IP`); `null` when none is configured. Organization admins may read it.',
  input: z.object({}),
  output: z.object({
    ip: z.string().nullable().describe('The public IP address of the platform host, or null when not configured'),
  }),
  access: { role: 'admin' },
  example: {},
});
