import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ServerWithJoin } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Register a remote server',
  description:
    '`address` is an IPv4 or IPv6 address or a host name. The record starts `pending`; the answer ' +
    'carries, once, a one-time join token (expires after 24 hours; `server.regenerateJoinToken` ' +
    "issues a new one) and the command that starts the server's agent with it. Refused " +
    '(BAD_REQUEST) when the organization already has as many servers as the platform allows ' +
    '(`billing.canCreateMoreServers`).',
  input: z.object({
    name: NonEmpty,
    address: NonEmpty,
    description: z.string().nullable().optional(),
  }),
  output: ServerWithJoin,
  access: { role: 'admin' },
  extension: true,
  example: { name: 'worker-1', address: '203.0.113.10', description: 'Build and web workloads' },
});
