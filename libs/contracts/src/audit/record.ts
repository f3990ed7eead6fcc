import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** One mutating operation, done or refused for permission: ids only, never input values. */
export const AuditEventRecord = z.object({
  auditEventId: z.string(),
  organizationId: z.string(),
  userId: z.string(),
  apiKeyId: z.string(),
  operation: z.string().describe('`<router>.<operation>`'),
  targets: z.record(z.string(), z.string()).describe('the id fields of the input, e.g. `{ "applicationId": "app_…" }`'),
  outcome: z.enum(['ok', 'forbidden']),
  address: z.string().nullable().describe("the caller's address as the control plane saw it"),
  requestId: z.string(),
  at: Timestamp,
});
