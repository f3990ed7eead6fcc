import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** A remote server registered with the platform, where services may run once its agent joins. */
export const ServerRecord = z.object({
  serverId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  address: z.string().describe('IPv4 or IPv6 address, or host name'),
  description: z.string().nullable(),
  status: z.string().describe("'pending' until the server's agent joins"),
  createdAt: Timestamp,
});
