import type { ForgeKind, GitProvider } from '@skiff/db';
import { PUBLIC_ONLY } from '@skiff/outbound';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { type CloneLogin, ForgeError, type ForgeClient, forgeClient, type ForgeHttpDeps } from './clients/index.js';
import { FORGES, type GitProviderService } from './git-providers.js';

type Values = Record<string, unknown>;

/**
 * What the platform reads from a forge through a connection: repositories, branches, a
 * connection test, and a clone login for a deploy. A forge's refusal or silence is bad input
 * naming the connection (`<kind>Id`), with the forge's reason and no credential in it.
 */
export class ForgeRepositories {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly providers: GitProviderService,
    /** Tests point this at their resolver; default the system's. */
    private readonly http: Partial<ForgeHttpDeps> = {},
  ) {}

  /** The client of a stored connection; `override` replaces settings or credentials for this use only (testConnection). */
  client(row: GitProvider, override: { config?: Values; secrets?: Values } = {}): ForgeClient {
    const kind = row.kind;
    const config = { ...FORGES[kind].defaults, ...row.config, ...override.config };
    const secrets = { ...this.providers.openSecrets(row), ...override.secrets };
    return forgeClient(
      { kind, config, secrets },
      {
        policy: this.deps.outbound ?? PUBLIC_ONLY,
        ...this.http,
        clock: this.deps.clock,
        saveTokens: async (tokens) => {
          // Re-read under the write so a credential changed meanwhile is not overwritten with the old one.
          await this.deps.db.transaction().execute(async (tx) => {
            const current = await tx.selectFrom('gitProviders').select('secrets').where('id', '=', row.id).forUpdate().executeTakeFirst();
            if (!current) return;
            const opened = JSON.parse(this.deps.secrets.open(current.secrets)) as Values;
            const next = { ...opened, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? undefined, tokenExpiresAt: tokens.expiresAt ?? undefined };
            await tx.updateTable('gitProviders').set({ secrets: this.deps.secrets.seal(JSON.stringify(next)) }).where('id', '=', row.id).execute();
          });
        },
      },
    );
  }

  async repositories(p: Principal, kind: ForgeKind, forgeId: string) {
    const row = await this.providers.find(p, kind, forgeId);
    return this.ask(kind, () => this.client(row).repositories());
  }

  async branches(p: Principal, kind: ForgeKind, input: { forgeId?: string; owner: string; repo: string; projectId?: number }) {
    if (!input.forgeId) throw Invalid(`${kind}Id`, 'required: the connection to read the repository through');
    if (input.repo.trim() === '' && input.projectId === undefined) throw Invalid('repo', 'required');
    const row = await this.providers.find(p, kind, input.forgeId);
    // GitLab: the numeric project id, when given, names the project instead of owner/repo.
    const [owner, repo] = input.projectId !== undefined ? ['', String(input.projectId)] : [input.owner, input.repo];
    return this.ask(kind, () => this.client(row).branches(owner, repo));
  }

  /** Lists repositories with the stored credentials, or with those given (not stored). */
  async testConnection(p: Principal, kind: ForgeKind, forgeId: string, override: { config?: Values; secrets?: Values } = {}) {
    const row = await this.providers.find(p, kind, forgeId);
    const { repositories } = await this.ask(kind, () => this.client(row, override).testConnection());
    return { ok: true, repositories, message: `Connected: ${repositories} repositor${repositories === 1 ? 'y' : 'ies'} reachable` };
  }

  /**
   * The clone address and a login minted for this clone (a deploy), through a connection of the
   * workload's organization; `field` names the workload's setting that points at it.
   */
  async cloneLogin(organizationId: string, kind: ForgeKind, forgeId: string, owner: string, repo: string, field: string): Promise<CloneLogin> {
    const row = await this.deps.db.selectFrom('gitProviders').selectAll().where('id', '=', forgeId).executeTakeFirst();
    if (!row || row.kind !== kind || row.organizationId !== organizationId) throw Invalid(field, `no such ${FORGES[kind].label} connection`);
    try {
      return await this.client(row).cloneLogin(owner, repo);
    } catch (err) {
      if (err instanceof ForgeError) throw Invalid(field, err.message);
      throw err;
    }
  }

  private async ask<T>(kind: ForgeKind, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ForgeError) throw Invalid(`${kind}Id`, err.message);
      throw err;
    }
  }
}
