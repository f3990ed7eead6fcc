import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ServerRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Register a remote server',
  description:
    '`address` is an IPv4 or IPv6 address or a host name. The record starts `pending`; the ' +
    "agent's join flow (which makes it usable) is not part of this operation yet. Refused " +
    '(BAD_REQUEST) when the organization already has as many servers as the platform allows ' +
    '(`billing.canCreateMoreServers`).',
  input: z.object({
    name: NonEmpty,
    address: NonEmpty,
    description: z.string().nullable().optional(),
  }),
  output: ServerRecord,
  access: { role: 'admin' },
  extension: true,
  example: { name: 'worker-1', address: '203.0.113.10', description: 'Build and web workloads' },
});
