import type { Database, Db, ServiceTable } from '@skiff/db';
import { type SelectQueryBuilder, sql } from 'kysely';
import { copyAppName } from '@skiff/domain';
import type { IdGenerator } from '../../ids.js';
import { compiledOnce } from './compiled-once.js';
import { iso } from './deps.js';
import { withoutHostPorts } from './published-ports.js';

export type ServiceKind = 'application' | 'compose' | 'cache' | 'database';

export const serviceTables = {
  application: { table: 'applications', idPrefix: 'app' },
  compose: { table: 'composeStacks', idPrefix: 'cmp' },
  cache: { table: 'cacheInstances', idPrefix: 'rds' },
  database: { table: 'databaseServices', idPrefix: 'dbs' },
} as const satisfies Record<ServiceKind, { table: ServiceTable; idPrefix: string }>;

const kinds = Object.keys(serviceTables) as ServiceKind[];

export interface ServiceSummary {
  id: string;
  type: ServiceKind;
  name: string;
  appName: string;
  description: string | null;
  applicationStatus: string;
  serverId: string | null;
  createdAt: string;
  environmentId: string;
}

const summaryColumns = ['id', 'name', 'appName', 'description', 'applicationStatus', 'serverId', 'createdAt', 'environmentId'] as const;

/**
 * The query of the services (of every kind) of some environments: a subquery selecting their
 * ids, or a text array parameter (`= any($n)`: the same statement whatever their number).
 */
export function servicesQuery(db: Db, environments: SelectQueryBuilder<Database, 'environments', { id: string }> | { anyOf: string }) {
  const [first, ...rest] = kinds.map((type) => {
    const q = db.selectFrom(serviceTables[type].table).select([...summaryColumns, sql<ServiceKind>`${type}::text`.as('type')]);
    return 'anyOf' in environments ? q.where('environmentId', '=', sql<string>`any(${environments.anyOf})`) : q.where('environmentId', 'in', environments);
  });
  return rest.reduce((q, next) => q.unionAll(next), first!);
}

/** Service rows as summaries, oldest first. */
export const summaries = (rows: (Omit<ServiceSummary, 'createdAt'> & { createdAt: Date })[]): ServiceSummary[] =>
  rows.map((r) => ({ ...r, createdAt: iso(r.createdAt) })).sort((a, b) => a.createdAt.localeCompare(b.createdAt));

const servicesOfEnvironments = compiledOnce(['environmentIds'], (db: Db, slot) => servicesQuery(db, { anyOf: slot.environmentIds }));

/** The services (of every kind) of some environments, oldest first, in one statement (one text, prepared once). */
export async function servicesOf(db: Db, environmentIds: string[]): Promise<ServiceSummary[]> {
  if (environmentIds.length === 0) return [];
  return summaries(await servicesOfEnvironments(db, { environmentIds }));
}

/** A workload whose removal from its server was queued with its environment's. */
export interface QueuedRemoval {
  kind: ServiceKind;
  id: string;
  appName: string;
  serverId: string | null;
  /** Whether its volumes (and a compose stack's bind-mounted `files/`) go too. */
  removeVolumes: boolean;
}

/**
 * Removing environments (with a project or an organization) removes their workloads too:
 * `queueRemovals` writes the agent commands in the removing transaction (volumes go when
 * `removeVolumes`; left out, each kind's default: a cache's go, a stack's stay), `removeRoutes`
 * runs the delete and queues the proxy configuration of the servers that routed to what it
 * took (domains go by foreign-key cascade), `notify` wakes the relay after the commit, and
 * `removeArchiveFiles` deletes the files of archives whose rows went (the applications'
 * archive rows go by cascade).
 */
export interface WorkloadRemovals {
  queueRemovals(tx: Db, environmentIds: string[], options?: { removeVolumes?: boolean }): Promise<QueuedRemoval[]>;
  removeRoutes(
    tx: Db,
    owner: { environmentIds: string[] } | { organizationId: string },
    remove: () => Promise<unknown>,
    field: string,
  ): Promise<number>;
  notify(): void;
  removeArchiveFiles(): Promise<void>;
}

export interface RemovalCounts {
  environments: number;
  applications: number;
  compose: number;
  caches: number;
  databases: number;
  domains: number;
  backups: number;
  archives: number;
}

const count = (row: { n: string | number }) => Number(row.n);
const DB_TARGETS = ['dbAId', 'dbBId', 'dbCId', 'dbDId', 'dbEId'] as const;

/** What removing these environments takes with it: their services and the records hanging off them. */
export async function countServices(db: Db, environmentIds: string[]): Promise<Omit<RemovalCounts, 'environments'>> {
  const services = await servicesOf(db, environmentIds);
  const idsOf = (t: ServiceKind) => services.filter((s) => s.type === t).map((s) => s.id);
  const [apps, stacks, caches, databases] = [idsOf('application'), idsOf('compose'), idsOf('cache'), idsOf('database')];
  // `in ('')` matches nothing and keeps the queries valid when a kind has no service.
  const [a, c, d] = [apps.length ? apps : [''], stacks.length ? stacks : [''], databases.length ? databases : ['']];
  const domains = await db
    .selectFrom('domains')
    .leftJoin('previewDeployments', 'previewDeployments.id', 'domains.previewDeploymentId')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where((eb) =>
      eb.or([eb('domains.applicationId', 'in', a), eb('domains.composeId', 'in', c), eb('previewDeployments.applicationId', 'in', a)]),
    )
    .executeTakeFirstOrThrow();
  const backups = await db
    .selectFrom('backups')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where((eb) => eb.or([eb('composeId', 'in', c), ...DB_TARGETS.map((column) => eb(column, 'in', d))]))
    .executeTakeFirstOrThrow();
  const archives = await db
    .selectFrom('applicationArchives')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('applicationId', 'in', a)
    .executeTakeFirstOrThrow();
  return {
    applications: apps.length,
    compose: stacks.length,
    caches: caches.length,
    databases: databases.length,
    domains: count(domains),
    backups: count(backups),
    archives: count(archives),
  };
}

/** What a copy must not share with its original: webhook tokens and published ports (`endpointSpecCluster`'s too, below). */
const resetOnCopy: Record<ServiceKind, Record<string, null>> = {
  application: { refreshToken: null },
  // A copy has not been deployed: the ports its original's agent reported are not its own.
  compose: { refreshToken: null, deployedHostPorts: null },
  cache: { externalPort: null },
  database: { externalPort: null },
};

/** A row read back, ready to insert again: jsonb values (read as objects) go back as JSON text. */
const insertable = (row: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v]),
  );

/**
 * Copies services into another environment: same configuration, fresh ids and app names,
 * status idle. Returns the new ids. `only` limits the copy to some services.
 */
export async function copyServices(
  db: Db,
  ids: IdGenerator,
  from: string,
  to: string,
  only?: { id: string; type: ServiceKind }[],
): Promise<string[]> {
  const created: string[] = [];
  for (const type of kinds) {
    const { table, idPrefix } = serviceTables[type];
    const wanted = only?.filter((s) => s.type === type).map((s) => s.id);
    if (wanted && wanted.length === 0) continue;
    let q = db.selectFrom(table).selectAll().where('environmentId', '=', from);
    if (wanted) q = q.where('id', 'in', wanted);
    const rows = (await q.execute()) as Record<string, unknown>[];
    for (const row of rows) {
      const id = ids(idPrefix);
      const copy = {
        ...insertable('endpointSpecCluster' in row ? { ...row, endpointSpecCluster: withoutHostPorts(row.endpointSpecCluster) } : row),
        ...resetOnCopy[type],
        id,
        environmentId: to,
        appName: copyAppName(String(row.appName)),
        applicationStatus: 'idle',
        createdAt: undefined,
      };
      await db.insertInto(table).values(copy as never).execute();
      created.push(id);
    }
  }
  return created;
}
