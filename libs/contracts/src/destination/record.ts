import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/**
 * An S3-compatible backup destination as responses show it. The secret key is write-only:
 * `hasSecretKey` says whether one is set.
 */
export const DestinationRecord = z.object({
  destinationId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  endpoint: z.string(),
  region: z.string(),
  bucket: z.string(),
  accessKey: z.string(),
  hasSecretKey: z.boolean(),
  hasEncryptionPassphrase: z.boolean().describe('archives written here are encrypted (age)'),
  createdAt: Timestamp,
});
