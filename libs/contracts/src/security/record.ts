import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/**
 * A basic-auth entry in front of an application's domains. The password is stored as a
 * bcrypt hash and never returned.
 */
export const SecurityRecord = z.object({
  securityId: z.string(),
  applicationId: z.string(),
  username: z.string(),
  createdAt: Timestamp,
});
