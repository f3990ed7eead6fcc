import { randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { hostname } from 'node:os';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Db, Server } from '@skiff/db';
import { type RemovedServerWorkloads, isServerAddress } from '@skiff/domain';
import { credentialDigest } from '../../agents/agent-credentials.js';
import type { Principal } from '../../authz/principal.js';
import { canSeeServer, visibleServers } from '../../authz/policy.js';
import { DomainError, Forbidden, Invalid } from '../../errors.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import { findOfOrganization } from '../shared/organization-records.js';
import type { ServerAgents } from './server-agents.js';

type ServerRecord = OutputOf<Contracts['server']['one']>;
type ServerJoin = OutputOf<Contracts['server']['create']>['join'];

/** How many servers an organization may have (null: unlimited), read inside the caller's transaction. */
export interface ServerLimits {
  limitOf(db: Db, organizationId: string): Promise<number | null>;
}

/** Foreign-key violation (Postgres and PGlite). */
const isForeignKeyViolation = (err: unknown) => (err as { code?: string })?.code === '23503';

/** A server is offline once its agent missed this many heartbeats. */
const MISSED_HEARTBEATS_OFFLINE = 3;
/** How long a join token can be used. */
export const JOIN_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

/** Where a joining agent reaches the control plane (`SKIFF_AGENT_GRPC_ADDRESS`, `SKIFF_AGENT_NATS_URL`). */
export interface AgentEndpoints {
  grpc: string;
  nats: string;
  /** The agent channel's CA (PEM), which the agent pins; none when the channel has no TLS. */
  ca?: string;
}

export interface ServerFleetOptions {
  agents: ServerAgents;
  /** Read whenever a join token is issued. */
  endpoints: () => AgentEndpoints;
  /** The control plane's public command key, which the agent pins when it joins (SKIFF_COMMAND_KEY). */
  commandKey: string;
  joinTokenTtlMs?: number;
  /** Deletes the files of archives whose rows went (the removed applications'). */
  removeArchiveFiles?: () => Promise<void>;
}

/**
 * The addresses join commands carry: the operator's settings, or else the gRPC listen
 * address (a wildcard one replaced by the public IP or the host name) and the control
 * plane's own NATS URL.
 */
export function agentEndpoints(
  o: { agents?: { grpcAddress?: string; natsUrl?: string }; grpc?: { host: string }; nats?: { url: string }; publicIp?: string; tls?: { ca: string } },
  grpcPort: () => number | undefined,
): () => AgentEndpoints {
  return () => {
    let grpc = o.agents?.grpcAddress;
    if (!grpc) {
      let host = o.grpc?.host ?? '127.0.0.1';
      if (['', '0.0.0.0', '::', '[::]'].includes(host)) host = o.publicIp ?? hostname();
      grpc = `${isIPv6(host) ? `[${host}]` : host}:${grpcPort() ?? 50051}`;
    }
    // Without the login the control plane's own URL may carry: agents get their own credentials.
    return {
      grpc,
      nats: withoutLogins(o.agents?.natsUrl ?? o.nats?.url ?? 'nats://127.0.0.1:4222'),
      ...(o.tls ? { ca: o.tls.ca } : {}),
    };
  };
}

/** Comma-separated NATS URLs without their `user:password@` parts. */
function withoutLogins(urls: string): string {
  return urls
    .split(',')
    .map((raw) => {
      try {
        const url = new URL(raw.trim());
        url.username = '';
        url.password = '';
        return url.toString().replace(/\/$/, '');
      } catch {
        return raw.trim().replace(/\/\/[^@/]*@/, '//');
      }
    })
    .join(',');
}

/** A one-time join token: `sjt_` and 43 base64url characters (256 random bits). */
const newJoinToken = () => `sjt_${randomBytes(32).toString('base64url')}`;

/** A value in a POSIX shell command line, quoted so nothing in it is interpreted. */
const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Server records and their agents' join tokens. Owners and admins write (the contracts say
 * so); members read the servers in their `accessedServers`. A record's status comes from its
 * agent: `pending` until it joins, then `online` or `offline` by when it was last heard from.
 */
export class ServerService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly limits: ServerLimits,
    private readonly fleet: ServerFleetOptions,
  ) {}

  private record(row: Server): ServerRecord {
    const remembered = this.fleet.agents.lastSeenOf(row.id);
    const stored = row.lastSeenAt ? new Date(row.lastSeenAt) : null;
    const lastSeen = remembered && (!stored || remembered > stored) ? remembered : stored;
    const offlineAfterMs = MISSED_HEARTBEATS_OFFLINE * this.fleet.agents.heartbeatIntervalSeconds * 1000;
    const status: ServerRecord['status'] =
      row.credentialHash === null ? 'pending' : lastSeen && this.deps.clock().getTime() - lastSeen.getTime() <= offlineAfterMs ? 'online' : 'offline';
    const unexpired = row.joinTokenExpiresAt && new Date(row.joinTokenExpiresAt) > this.deps.clock() ? row.joinTokenExpiresAt : null;
    return {
      serverId: row.id,
      organizationId: row.organizationId,
      name: row.name,
      address: row.address,
      description: row.description,
      status,
      lastSeenAt: lastSeen ? lastSeen.toISOString() : null,
      joinedAt: row.joinedAt ? iso(row.joinedAt) : null,
      agentVersion: row.agentVersion,
      dockerVersion: row.dockerVersion,
      hostname: row.hostname,
      joinTokenExpiresAt: unexpired ? iso(unexpired) : null,
      createdAt: iso(row.createdAt),
    };
  }

  /** A fresh join token's columns, and what the caller is shown once. */
  private newJoin(serverId: string) {
    const token = newJoinToken();
    const expiresAt = new Date(this.deps.clock().getTime() + (this.fleet.joinTokenTtlMs ?? JOIN_TOKEN_TTL_MS));
    const endpoints = this.fleet.endpoints();
    const env = {
      SKIFF_SERVER_ID: serverId,
      SKIFF_JOIN_TOKEN: token,
      SKIFF_CONTROL_PLANE_GRPC: endpoints.grpc,
      SKIFF_NATS_URL: endpoints.nats,
      ...(endpoints.ca ? { SKIFF_CONTROL_PLANE_CA: Buffer.from(endpoints.ca).toString('base64') } : {}),
      SKIFF_COMMAND_KEY: this.fleet.commandKey,
    };
    const join: ServerJoin = {
      token,
      expiresAt: expiresAt.toISOString(),
      env,
      command: `env ${Object.entries(env)
        .map(([k, v]) => `${k}=${shellQuote(v)}`)
        .join(' ')} SKIFF_AGENT_DATA_DIR=/var/lib/skiff-agent node --lite-mode --max-semi-space-size=1 skiff-agent.mjs`,
    };
    return { columns: { joinTokenHash: credentialDigest(token), joinTokenExpiresAt: expiresAt }, join };
  }

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

  /** `billing.canCreateMoreServers`: the organization's count against its limit. */
  async allowance(p: Principal) {
    const servers = await this.count(p.organizationId);
    const maxServers = await this.limits.limitOf(this.db, p.organizationId);
    return { canCreate: maxServers === null || servers < maxServers, servers, maxServers };
  }

  async create(p: Principal, input: { name: string; address: string; description?: string | null }) {
    const address = checkAddress(input.address);
    // One creation at a time per organization, so two at once cannot both pass the limit.
    const row = await this.db.transaction().execute(async (tx) => {
      await tx.selectFrom('organizations').select('id').where('id', '=', p.organizationId).forUpdate().executeTakeFirst();
      const maxServers = await this.limits.limitOf(tx, p.organizationId);
      if (maxServers !== null) {
        const { n } = await tx
          .selectFrom('servers')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organizationId', '=', p.organizationId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= maxServers) {
          throw new DomainError('BAD_REQUEST', `The organization has reached its limit of ${maxServers} servers`);
        }
      }
      const id = this.deps.ids('srv');
      const { columns, join } = this.newJoin(id);
      const inserted = await tx
        .insertInto('servers')
        .values({
          id,
          organizationId: p.organizationId,
          name: input.name,
          address,
          description: input.description ?? null,
          ...columns,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { inserted, join };
    });
    return { ...this.record(row.inserted), join: row.join };
  }

  /** A new join token for the server (any unused one stops working); the next join replaces its credential. */
  async regenerateJoinToken(p: Principal, serverId: string) {
    const row = await this.find(p, serverId);
    const { columns, join } = this.newJoin(row.id);
    const updated = await this.db.updateTable('servers').set(columns).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    return { ...this.record(updated), join };
  }

  private async find(p: Principal, serverId: string): Promise<Server> {
    const row = await findOfOrganization(this.db, 'servers', p, serverId, 'server');
    if (!canSeeServer(p, row.id)) throw Forbidden('No access to this server');
    return row;
  }

  async one(p: Principal, serverId: string) {
    return this.record(await this.find(p, serverId));
  }

  async all(p: Principal) {
    let q = this.db.selectFrom('servers').selectAll().where('organizationId', '=', p.organizationId);
    const granted = visibleServers(p);
    if (granted) {
      if (granted.length === 0) return [];
      q = q.where('id', 'in', granted);
    }
    return (await q.orderBy('createdAt').orderBy('id').execute()).map((row) => this.record(row));
  }

  async update(p: Principal, input: { serverId: string; name?: string; address?: string; description?: string | null }) {
    const row = await this.find(p, input.serverId);
    const changes: Record<string, unknown> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.address !== undefined) changes.address = checkAddress(input.address);
    if (input.description !== undefined) changes.description = input.description;
    if (Object.keys(changes).length === 0) return this.record(row);
    const updated = await this.db.updateTable('servers').set(changes).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    return this.record(updated);
  }

  /**
   * Removes a server (its certificates go with it). While workloads are recorded on it, only
   * when the caller says what becomes of them: `remove` (their records go here, and the agent
   * removes their services and containers from the machine, volumes kept) or `leaveRunning`
   * (their records go, the machine keeps running them). Its unfinished commands end failed.
   */
  async remove(p: Principal, serverId: string, workloads?: 'remove' | 'leaveRunning') {
    const row = await this.find(p, serverId);
    const on = await this.workloadsOn(row.id);
    if (on.length && !workloads) {
      throw Invalid(
        'serverId',
        `${on.join(', ')} still on this server; move or delete them first, or send workloads: "remove" (the agent removes them from the machine, volumes kept) or "leaveRunning"`,
      );
    }
    const told: RemovedServerWorkloads = workloads ?? 'none';
    try {
      await this.db.transaction().execute(async (tx) => {
        // Its agent, if it still runs, is told the server was removed (report-server.ts).
        const { credentialHash } = await tx.selectFrom('servers').select('credentialHash').where('id', '=', row.id).forUpdate().executeTakeFirstOrThrow();
        if (credentialHash) {
          await tx
            .insertInto('removedServers')
            .values({ credentialHash, serverId: row.id, workloads: told })
            .onConflict((oc) => oc.column('credentialHash').doUpdateSet({ workloads: told }))
            .execute();
        }
        if (workloads) {
          // Their domains, deployments, archives and backups go by foreign-key cascade.
          for (const table of ['applications', 'composeStacks', 'cacheInstances', 'databaseServices'] as const) await tx.deleteFrom(table).where('serverId', '=', row.id).execute();
        }
        await tx
          .updateTable('commands')
          .set({ status: 'failed', finishedAt: this.deps.clock(), resultReason: SERVER_REMOVED_REASON_FOR_COMMANDS })
          .where('serverId', '=', row.id)
          .where('status', 'in', ['pending', 'published'])
          .execute();
        await tx.deleteFrom('servers').where('id', '=', row.id).execute();
      });
    } catch (err) {
      // A service placed on the server since the count above.
      if (isForeignKeyViolation(err)) throw Invalid('serverId', 'services are still on this server; move or delete them first');
      throw err;
    }
    this.fleet.agents.removed(row.id, told);
    if (workloads && on.length) await this.fleet.removeArchiveFiles?.();
    return this.record(row);
  }

  /** "2 applications, 1 cache instance": what is recorded on the server. */
  private async workloadsOn(serverId: string): Promise<string[]> {
    const on: string[] = [];
    for (const [table, what] of [
      ['applications', 'application'],
      ['composeStacks', 'compose stack'],
      ['cacheInstances', 'cache instance'],
      ['databaseServices', 'database service'],
    ] as const) {
      const { n } = await this.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('serverId', '=', serverId)
        .executeTakeFirstOrThrow();
      if (Number(n) > 0) on.push(`${n} ${what}${Number(n) > 1 ? 's' : ''}`);
    }
    return on;
  }
}

/** The reason a removed server's unfinished commands end with. */
const SERVER_REMOVED_REASON_FOR_COMMANDS = 'the server was removed';

function checkAddress(text: string): string {
  const address = text.trim();
  if (!isServerAddress(address)) throw Invalid('address', 'must be an IPv4 or IPv6 address or a host name');
  return address;
}
