import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ServerAllowance } from './record.js';

export const canCreateMoreServers = defineContract({
  method: 'GET',
  summary: "Whether the organization may register another server",
  description:
    "Compares the organization's server count with its limit: the server quantity of its " +
    "subscription at the payment provider (set by the provider's webhook, `POST /webhooks/billing`), " +
    "otherwise the platform's default (`SKIFF_MAX_SERVERS`; unlimited when unset). `server.create` " +
    'obeys the same limit.',
  input: z.object({}),
  output: ServerAllowance,
  example: {},
});
