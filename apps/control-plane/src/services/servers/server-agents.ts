import { randomBytes } from 'node:crypto';
import { LOCAL_SERVER_ID, type RemovedServerWorkloads } from '@skiff/domain';
import type { Logger } from 'pino';
import { type AgentCredentials, type CredentialSource, credentialDigest } from '../../agents/agent-credentials.js';
import type { ServiceDeps } from '../shared/deps.js';

/** What an agent says about itself when it registers. */
export interface AgentInfo {
  agentVersion: string;
  hostname: string;
  dockerVersion: string;
}

/** A join the control plane refuses; its message tells the operator what to do. */
export class JoinRefused extends Error {
  override name = 'JoinRefused';
}

export interface ServerAgentsOptions {
  credentials: AgentCredentials;
  /** Seconds between an agent's heartbeats (told to agents; a server is offline after three missed). */
  heartbeatIntervalSeconds: number;
  log: Logger;
}

/** Longest a registered value is kept (the agent sends what it likes). */
const INFO_MAX = 200;
const clip = (text: string) => (text.trim() === '' ? null : text.trim().slice(0, INFO_MAX));

/** A new agent credential: `sac_` and 43 base64url characters (256 random bits). */
const newCredential = () => `sac_${randomBytes(32).toString('base64url')}`;

/**
 * The agent side of server records: joining with a one-time token (which issues the
 * server's credential), registration, and when each agent was last heard from. Presence is
 * kept in memory on every call and written to the server's record at most once per
 * heartbeat interval, so heartbeats cost no database write each.
 */
export class ServerAgents {
  private readonly lastSeen = new Map<string, Date>();
  private readonly writtenAt = new Map<string, number>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly o: ServerAgentsOptions,
  ) {}

  get heartbeatIntervalSeconds(): number {
    return this.o.heartbeatIntervalSeconds;
  }

  /** Every joined server's credential digest (what AgentCredentials loads). */
  readonly credentialSource: CredentialSource = async () => [
    ...(await this.deps.db.selectFrom('servers').select(['id', 'credentialHash']).where('credentialHash', 'is not', null).execute()).map((r) => ({
      serverId: r.id,
      digest: r.credentialHash!,
    })),
    ...(await this.deps.db.selectFrom('removedServers').select(['serverId', 'credentialHash', 'workloads']).execute()).map((r) => ({
      serverId: r.serverId,
      digest: r.credentialHash,
      removed: r.workloads as RemovedServerWorkloads,
    })),
  ];

  /**
   * Consumes a join token (single use, atomically: of two agents presenting it at once, one
   * wins) and answers the server's new credential, which replaces any earlier one.
   */
  async join(token: string, claimedServerId: string, info: AgentInfo): Promise<{ serverId: string; credential: string }> {
    const tokenHash = credentialDigest(token);
    const now = this.deps.clock();
    const credential = newCredential();
    const digest = credentialDigest(credential);
    const joined = await this.deps.db
      .updateTable('servers')
      .set({
        credentialHash: digest,
        joinTokenHash: null,
        joinTokenExpiresAt: null,
        status: 'joined',
        joinedAt: now,
        lastSeenAt: now,
        agentVersion: clip(info.agentVersion),
        dockerVersion: clip(info.dockerVersion),
        hostname: clip(info.hostname),
      })
      .where('joinTokenHash', '=', tokenHash)
      .where('joinTokenExpiresAt', '>', now)
      .where('id', '=', claimedServerId)
      .returning('id')
      .executeTakeFirst();
    if (!joined) {
      const row = await this.deps.db.selectFrom('servers').select(['id', 'joinTokenExpiresAt']).where('joinTokenHash', '=', tokenHash).executeTakeFirst();
      if (!row) throw new JoinRefused('the join token is unknown or was already used: issue a new one with server.regenerateJoinToken');
      if (row.id !== claimedServerId) throw new JoinRefused(`the join token is not for server ${claimedServerId}`);
      throw new JoinRefused('the join token has expired: issue a new one with server.regenerateJoinToken');
    }
    this.o.credentials.set(joined.id, digest);
    this.markSeen(joined.id, now, true);
    this.o.log.info({ serverId: joined.id, agentVersion: info.agentVersion, hostname: info.hostname }, 'server joined');
    return { serverId: joined.id, credential };
  }

  /** An agent with its credential registered (at its start): records what it runs. */
  async registered(serverId: string, info: AgentInfo): Promise<void> {
    const now = this.deps.clock();
    this.markSeen(serverId, now, true);
    if (serverId === LOCAL_SERVER_ID) return;
    await this.deps.db
      .updateTable('servers')
      .set({ lastSeenAt: now, agentVersion: clip(info.agentVersion), dockerVersion: clip(info.dockerVersion), hostname: clip(info.hostname) })
      .where('id', '=', serverId)
      .execute();
  }

  /** An authenticated call from the server's agent (heartbeat or report). */
  seen(serverId: string): void {
    const now = this.deps.clock();
    if (!this.markSeen(serverId, now, false) || serverId === LOCAL_SERVER_ID) return;
    this.deps.db
      .updateTable('servers')
      .set({ lastSeenAt: now })
      .where('id', '=', serverId)
      .where((eb) => eb.or([eb('lastSeenAt', 'is', null), eb('lastSeenAt', '<', now)]))
      .execute()
      .catch((err: unknown) => {
        this.writtenAt.delete(serverId);
        this.o.log.warn({ serverId, err: err instanceof Error ? err.message : String(err) }, 'could not record when the agent was last seen');
      });
  }

  /** When the agent was last heard from by this process, if it was. */
  lastSeenOf(serverId: string): Date | undefined {
    return this.lastSeen.get(serverId);
  }

  /** A removed server: forget it (its credential stops working). */
  removed(serverId: string, workloads: RemovedServerWorkloads): void {
    this.o.credentials.forget(serverId, workloads);
    this.lastSeen.delete(serverId);
    this.writtenAt.delete(serverId);
  }

  /** Notes the time in memory; answers whether it is time to write it to the record (and counts it written). */
  private markSeen(serverId: string, now: Date, written: boolean): boolean {
    this.lastSeen.set(serverId, now);
    const last = this.writtenAt.get(serverId);
    const due = written || last === undefined || now.getTime() - last >= this.o.heartbeatIntervalSeconds * 1000;
    if (due) this.writtenAt.set(serverId, now.getTime());
    return due && !written;
  }
}
