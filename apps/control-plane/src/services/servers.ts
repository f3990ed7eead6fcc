import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Server } from '@skiff/db';
import { isServerAddress } from '@skiff/domain';
import type { Principal } from '../authz/principal.js';
import { isAdmin } from '../authz/policy.js';
import { DomainError, Forbidden, Invalid } from '../errors.js';
import type { ServiceDeps } from './deps.js';
import { findOfOrganization } from './organization-records.js';

type ServerRecord = OutputOf<Contracts['server']['one']>;

const record = (row: Server): ServerRecord => ({
  serverId: row.id,
  organizationId: row.organizationId,
  name: row.name,
  address: row.address,
  description: row.description,
  status: row.status,
  createdAt: new Date(row.createdAt).toISOString(),
});

/** Foreign-key violation (Postgres and PGlite). */
const isForeignKeyViolation = (err: unknown) => (err as { code?: string })?.code === '23503';

/**
 * Server records (the agent's join flow comes later). Owners and admins write (the contracts
 * say so); members read the servers in their `accessedServers`.
 */
export class ServerService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly maxServers: number | null,
  ) {}

  private get db() {
    return this.deps.db;
  }

  async count(organizationId: string): Promise<number> {
    const { n } = await this.db
      .selectFrom('servers')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organizationId', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** `billing.canCreateMoreServers`: the organization's count against the platform's limit. */
  async allowance(p: Principal) {
    const servers = await this.count(p.organizationId);
    return { canCreate: this.maxServers === null || servers < this.maxServers, servers, maxServers: this.maxServers };
  }

  async create(p: Principal, input: { name: string; address: string; description?: string | null }) {
    const address = checkAddress(input.address);
    // One creation at a time per organization, so two at once cannot both pass the limit.
    const row = await this.db.transaction().execute(async (tx) => {
      await tx.selectFrom('organizations').select('id').where('id', '=', p.organizationId).forUpdate().executeTakeFirst();
      if (this.maxServers !== null) {
        const { n } = await tx
          .selectFrom('servers')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organizationId', '=', p.organizationId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= this.maxServers) {
          throw new DomainError('BAD_REQUEST', `The organization has reached its limit of ${this.maxServers} servers`);
        }
      }
      return tx
        .insertInto('servers')
        .values({
          id: this.deps.ids('srv'),
          organizationId: p.organizationId,
          name: input.name,
          address,
          description: input.description ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return record(row);
  }

  private async find(p: Principal, serverId: string): Promise<Server> {
    const row = await findOfOrganization(this.db, 'servers', p, serverId, 'server');
    if (!isAdmin(p) && !p.permissions.accessedServers.includes(row.id)) throw Forbidden('No access to this server');
    return row;
  }

  async one(p: Principal, serverId: string) {
    return record(await this.find(p, serverId));
  }

  async all(p: Principal) {
    let q = this.db.selectFrom('servers').selectAll().where('organizationId', '=', p.organizationId);
    if (!isAdmin(p)) {
      const granted = p.permissions.accessedServers;
      if (granted.length === 0) return [];
      q = q.where('id', 'in', granted);
    }
    return (await q.orderBy('createdAt').orderBy('id').execute()).map(record);
  }

  async update(p: Principal, input: { serverId: string; name?: string; address?: string; description?: string | null }) {
    const row = await this.find(p, input.serverId);
    const changes: Record<string, unknown> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.address !== undefined) changes.address = checkAddress(input.address);
    if (input.description !== undefined) changes.description = input.description;
    if (Object.keys(changes).length === 0) return record(row);
    const updated = await this.db.updateTable('servers').set(changes).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    return record(updated);
  }

  /** Removes a server no service runs on (its certificates go with it). */
  async remove(p: Principal, serverId: string) {
    const row = await this.find(p, serverId);
    const on: string[] = [];
    for (const [table, what] of [
      ['applications', 'application'],
      ['composeStacks', 'compose stack'],
      ['cacheInstances', 'cache instance'],
    ] as const) {
      const { n } = await this.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('serverId', '=', row.id)
        .executeTakeFirstOrThrow();
      if (Number(n) > 0) on.push(`${n} ${what}${Number(n) > 1 ? 's' : ''}`);
    }
    if (on.length) throw Invalid('serverId', `${on.join(', ')} still on this server; move or delete them first`);
    try {
      await this.db.deleteFrom('servers').where('id', '=', row.id).execute();
    } catch (err) {
      // A service placed on the server since the count above.
      if (isForeignKeyViolation(err)) throw Invalid('serverId', 'services are still on this server; move or delete them first');
      throw err;
    }
    return record(row);
  }
}

function checkAddress(text: string): string {
  const address = text.trim();
  if (!isServerAddress(address)) throw Invalid('address', 'must be an IPv4 or IPv6 address or a host name');
  return address;
}
