import type { Contract } from '@skiff/contracts';
import type { Context } from 'hono';
import type { Principal } from '../authz/principal.js';
import type { AuditRecordInput } from '../services/audit/index.js';
import type { RequestLogger } from './request-logger.js';

/** One mutating operation as the audit log takes it; the input is only read for its ids. */
export type AuditEntry = AuditRecordInput;

export interface AuditRecorder {
  record(entry: AuditEntry): Promise<void>;
}

/** The peer address of the request's socket (@hono/node-server puts the request in `env.incoming`); null in process. */
export function remoteAddress(ctx: Context): string | null {
  const env = ctx.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? null;
}

/**
 * Records a mutating operation (a contract that is not a read) that was done or refused for
 * permission. A failure to record is logged and does not change the answer: the change is made.
 */
export async function audited(
  audit: AuditRecorder | undefined,
  contract: Contract,
  entry: Omit<AuditEntry, 'operation' | 'principal'> & { principal: Principal | null },
  log: RequestLogger,
): Promise<void> {
  if (!audit || contract.method === 'GET' || !entry.principal) return;
  try {
    await audit.record({ ...entry, principal: entry.principal, operation: contract.name });
  } catch (err) {
    log.get().error({ err: (err as Error).message }, 'could not write the audit log');
  }
}
