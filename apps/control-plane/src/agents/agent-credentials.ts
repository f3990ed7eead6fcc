import { createHash } from 'node:crypto';
import type { RemovedServerWorkloads } from '@skiff/domain';

/** SHA-256 (hex) of an agent credential or a join token: the form both are stored in. */
export const credentialDigest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Every joined server's digest, and (`removed`: what their agents do with their workloads) those of removed servers. */
export type CredentialSource = () => Promise<Array<{ serverId: string; digest: string; removed?: RemovedServerWorkloads }>>;

/** A removed server's entry: its agent is told what to do with its workloads. */
export interface RemovedServer {
  serverId: string;
  workloads: RemovedServerWorkloads;
}

export interface AgentCredentialsOptions {
  /** Reads every joined server's digest (the database); without it only `add`ed credentials count. */
  load?: CredentialSource;
  /** A credential not found starts a reload at most this often (another process may have changed them). Default 5 s. */
  reloadAfterMissMs?: number;
  onLoadError?: (err: unknown) => void;
}

/**
 * Which server a credential belongs to, answered from memory: every report call
 * authenticates, so no lookup reaches the database. Credentials are kept as SHA-256 digests
 * and looked up by the digest of what is presented, so the comparison never depends on the
 * secret. Two kinds of entries: fixed ones (the platform host's agent and its file
 * credential) and one per joined server, loaded from the database at start and changed in
 * place when a server joins, re-joins or is removed. An unknown credential triggers a reload
 * (at most every few seconds), so a change made by another process is seen soon after.
 */
export class AgentCredentials {
  private readonly fixed = new Map<string, string>();
  private readonly joined = new Map<string, string>();
  private readonly digestOfServer = new Map<string, string>();
  /** Digests of removed servers' credentials: their agents are told so (removedServerOf). */
  private readonly removed = new Map<string, RemovedServer>();
  private lastReload = 0;
  private reloading: Promise<void> | null = null;
  /** Changes made while a reload reads the database: applied again on top of what it read. */
  private changesDuringReload: Array<[serverId: string, digest: string | null]> = [];

  constructor(private readonly options: AgentCredentialsOptions = {}) {}

  /** A credential that is not in the database (the platform host's own agent). */
  add(credential: string, serverId: string): this {
    if (credential.length < 16) throw new Error('an agent credential must be at least 16 characters');
    this.fixed.set(credentialDigest(credential), serverId);
    return this;
  }

  serverOf(credential: string): string | undefined {
    const digest = credentialDigest(credential);
    const serverId = this.fixed.get(digest) ?? this.joined.get(digest);
    if (serverId === undefined) this.reloadSoon();
    return serverId;
  }

  /** Records a server's (new) credential digest; its earlier credential stops working. */
  set(serverId: string, digest: string): void {
    if (this.reloading) this.changesDuringReload.push([serverId, digest]);
    this.apply(serverId, digest);
  }

  /** A removed server: its credential stops working, and is known as a removed server's. */
  forget(serverId: string, workloads: RemovedServerWorkloads = 'none'): void {
    const digest = this.digestOfServer.get(serverId);
    if (digest !== undefined) this.removed.set(digest, { serverId, workloads });
    if (this.reloading) this.changesDuringReload.push([serverId, null]);
    this.apply(serverId, null);
  }

  /** The removed server whose credential this was, if any (only for a credential serverOf does not know). */
  removedServerOf(credential: string): RemovedServer | undefined {
    return this.removed.get(credentialDigest(credential));
  }

  private apply(serverId: string, digest: string | null): void {
    const old = this.digestOfServer.get(serverId);
    if (old !== undefined) this.joined.delete(old);
    this.digestOfServer.delete(serverId);
    if (digest === null) return;
    this.joined.set(digest, serverId);
    this.digestOfServer.set(serverId, digest);
  }

  /** Replaces the joined servers' entries with what `load` answers. */
  async reload(): Promise<void> {
    if (!this.options.load) return;
    this.reloading ??= (async () => {
      try {
        this.lastReload = Date.now();
        this.changesDuringReload = [];
        const rows = await this.options.load!();
        this.joined.clear();
        this.digestOfServer.clear();
        for (const row of rows) {
          if (row.removed) this.removed.set(row.digest, { serverId: row.serverId, workloads: row.removed });
          else this.apply(row.serverId, row.digest);
        }
        for (const [serverId, digest] of this.changesDuringReload) this.apply(serverId, digest);
      } finally {
        this.changesDuringReload = [];
        this.reloading = null;
      }
    })();
    return this.reloading;
  }

  private reloadSoon(): void {
    if (!this.options.load || this.reloading) return;
    if (Date.now() - this.lastReload < (this.options.reloadAfterMissMs ?? 5_000)) return;
    this.reload().catch((err: unknown) => this.options.onLoadError?.(err));
  }
}
