import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AuditEventRecord } from './record.js';

const Instant = z.iso.datetime({ offset: true });

export const list = defineContract({
  method: 'GET',
  summary: "The organization's audit log, newest first",
  description:
    'Every mutating operation of the organization that succeeded or was ' +
    'refused for permission (who, which key, operation, the ids it named, when, from which ' +
    'address; never input values). Filters combine; `targetId` matches any id of the input. ' +
    'Pages: pass the answer\'s `nextCursor` as `cursor` (null: no more). Kept ' +
    '`SKIFF_AUDIT_RETENTION_DAYS` (90) days.',
  input: z.object({
    userId: z.string().min(1).optional(),
    apiKeyId: z.string().min(1).optional(),
    operation: z.string().min(1).max(100).optional(),
    targetId: z.string().min(1).optional(),
    from: Instant.optional().describe('at or after (ISO-8601)'),
    to: Instant.optional().describe('before (ISO-8601)'),
    limit: z.number().int().min(1).max(200).optional().describe('default 50'),
    cursor: z.string().min(1).max(200).optional(),
  }),
  output: z.object({ items: z.array(AuditEventRecord), nextCursor: z.string().nullable() }),
  access: { role: 'admin' },
  example: { limit: 20 },
  extension: true,
});
