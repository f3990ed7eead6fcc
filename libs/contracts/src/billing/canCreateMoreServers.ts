import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ServerAllowance } from './record.js';

export const canCreateMoreServers = defineContract({
  method: 'GET',
  summary: "Whether the organization may register another server",
  description:
    "Compares the organization's server count with the platform's limit " +
    '(`SKIFF_MAX_SERVERS`; unlimited when unset).',
  input: z.object({}),
  output: ServerAllowance,
  example: {},
});
