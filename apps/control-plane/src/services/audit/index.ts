// The audit log of mutating operations: written by the HTTP mount, read through audit.list.
export { AuditLog, DEFAULT_AUDIT_RETENTION_DAYS, targetsOf, type AuditRecordInput } from './audit-log.js';
