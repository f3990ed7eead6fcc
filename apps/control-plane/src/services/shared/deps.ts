import type { Db } from '@skiff/db';
import type { OutboundPolicy } from '@skiff/outbound';
import type { SecretBox } from '../../crypto/secret-box.js';
import { Invalid } from '../../errors.js';
import type { IdGenerator } from '../../ids.js';

/** What every service gets from the composition root. */
export interface ServiceDeps {
  db: Db;
  ids: IdGenerator;
  clock: () => Date;
  secrets: SecretBox;
  /** Called after any change that can alter what an API key may do, once it committed (identity/access-changes.ts). */
  onAccessChange: () => void | Promise<void>;
  /** Ended deployments kept per workload (`SKIFF_KEEP_DEPLOYMENTS`; default DEFAULT_KEEP_DEPLOYMENTS, 20). */
  keepDeployments?: number;
  /** Done deployments whose built images are kept for rollback while rollbackActive is on (`SKIFF_ROLLBACK_KEEP_IMAGES`; default 3). */
  rollbackImages?: number;
  /** Which destinations users' git sources and catalogs may be fetched from (`SKIFF_OUTBOUND_ALLOW_PRIVATE`); default public only. */
  outbound?: OutboundPolicy;
  /** The host ports the control plane listens on, refused to workloads of the platform host (published-ports.ts `platformHostPorts`). */
  platformPorts?: ReadonlyMap<string, string>;
  /** The host ports one compose stack may publish (`SKIFF_MAX_COMPOSE_PORTS`; default 100, published-ports.ts). */
  maxComposePorts?: number;
}

export const iso = (d: Date | string) => (typeof d === 'string' ? new Date(d) : d).toISOString();

/** Postgres unique violation (same code on PGlite). */
export const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === '23505';

/** Postgres refusing an index entry over its size limit (program_limit_exceeded; same on PGlite). */
const isIndexRowTooBig = (err: unknown) => (err as { code?: string })?.code === '54000' && /index row/.test((err as Error).message ?? '');

/**
 * Runs a write whose unique index is a rule of the input: a violation answers as bad input
 * naming `field`, and so does a value too long for the index to hold.
 */
export async function uniqueAs<T>(field: string, message: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw Invalid(field, message);
    if (isIndexRowTooBig(err)) throw Invalid(field, 'is too long');
    throw err;
  }
}

/**
 * The columns of an update that were given (undefined: not given). An UPDATE needs at least
 * one: callers answer the record unchanged when this is empty (as application.update does).
 */
export function givenColumns<T extends Record<string, unknown>>(columns: T): Partial<T> {
  return Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined)) as Partial<T>;
}
