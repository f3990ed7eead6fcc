import type { RouterHandlers } from '../http/context.js';
import type { AuditLog } from '../services/audit/index.js';

export const auditHandlers = (audit: AuditLog): RouterHandlers<'audit'> => ({
  list: (input, { principal }) => audit.list(principal, input),
});
