import type { Contracts, OutputOf } from '@skiff/contracts';
import { LOCAL_SERVER_ID } from '@skiff/domain';
import type { OutboundPolicy } from '@skiff/outbound';
import type { Logger } from 'pino';
import type { AgentBundle, BundleFile } from '../../agents/agent-bundle.js';
import { type AgentControl, AgentUnreachable } from '../../agents/outbound/control-client.js';
import type { Principal } from '../../authz/principal.js';
import { requirePlatformAdmin } from '../../authz/policy.js';
import { DomainError } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { newestRelease, compareVersions } from './release-feed.js';

type AgentUpdate = OutputOf<Contracts['settings']['updateServer']>['agents'][number];

/** How the control plane itself is updated (updateServer's answer; the README says the same). */
export const CONTROL_PLANE_UPDATE =
  'Install the new version where the control plane runs (a new checkout or `git pull` of the release), then call ' +
  'settings.reloadServer: the control plane finishes the requests in flight and exits with status 75, and tools/up ' +
  'builds the installed version and starts it again (queued commands wait in the outbox meanwhile). Then call ' +
  'settings.updateServer to bring the agents to that version: each downloads the agent program the control plane offers ' +
  '(SKIFF_AGENT_BUNDLE) and restarts on it.';

export interface PlatformUpdatesOptions {
  version: string;
  /** SKIFF_RELEASE_FEED_URL, or DEFAULT_RELEASE_FEED_URL. */
  feedUrl: string;
  policy: OutboundPolicy;
  feedTimeoutMs?: number;
  /** Starts a graceful restart of this process (main.ts); absent: reloadServer is refused. */
  restart?: () => void;
  agents: AgentControl;
  /** The agent program offered to agents; absent or none installed: they restart on their own. */
  bundle?: Pick<AgentBundle, 'current'>;
  /** How long a restarted agent has to answer again with the new version (default 90 s). */
  agentReturnTimeoutMs?: number;
  /** Between two checks of a restarting agent (default 2 s). */
  agentPollMs?: number;
  log: Logger;
}

/** settings.getUpdateData, reloadServer and updateServer: the whole platform, so platform administrators only. */
export class PlatformUpdates {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly options: PlatformUpdatesOptions,
  ) {}

  async getUpdateData(p: Principal) {
    requirePlatformAdmin(p, 'Only a platform administrator may check for platform updates');
    const latest = await newestRelease({ url: this.options.feedUrl, policy: this.options.policy, timeoutMs: this.options.feedTimeoutMs });
    return {
      currentVersion: this.options.version,
      latestVersion: latest.version,
      updateAvailable: compareVersions(latest.version, this.options.version) > 0,
      releaseUrl: latest.url ?? null,
      notes: latest.notes ?? null,
      feedUrl: this.options.feedUrl,
    };
  }

  /** Answers first; the restart begins once the answer is on its way (main.ts waits for requests in flight). */
  async reloadServer(p: Principal) {
    requirePlatformAdmin(p, 'Only a platform administrator may restart the platform');
    const restart = this.options.restart;
    if (!restart) throw new DomainError('BAD_REQUEST', 'This control plane runs without a supervisor that would start it again (tools/up): it was not restarted');
    this.options.log.info('restart requested through settings.reloadServer');
    setImmediate(restart);
    return {};
  }

  /** Each server's agent in turn: told to restart on this version, then awaited until it answers again. */
  async updateServer(p: Principal) {
    requirePlatformAdmin(p, "Only a platform administrator may update every server's agent");
    const joined = await this.deps.db.selectFrom('servers').select('id').where('credentialHash', 'is not', null).orderBy('createdAt').execute();
    const bundle = (await this.options.bundle?.current()) ?? null;
    const agents: AgentUpdate[] = [];
    for (const serverId of [LOCAL_SERVER_ID, ...joined.map((s) => s.id)]) agents.push(await this.updateAgent(serverId, bundle));
    return { version: this.options.version, agents, controlPlane: CONTROL_PLANE_UPDATE };
  }

  private async updateAgent(serverId: string, bundle: BundleFile | null): Promise<AgentUpdate> {
    const version = this.options.version;
    let first;
    try {
      first = await this.ask(serverId, false, bundle);
    } catch (err) {
      return { serverId, status: 'unreachable', detail: (err as Error).message };
    }
    if (!first.restarting) return { serverId, status: 'current', detail: `runs ${first.version}` };
    this.options.log.info({ serverId, from: first.version, to: version }, 'agent restarting for an update');
    const deadline = Date.now() + (this.options.agentReturnTimeoutMs ?? 90_000);
    let last = 'it did not answer after its restart';
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, this.options.agentPollMs ?? 2_000));
      try {
        const again = await this.ask(serverId, true, null);
        if (again.version === version) return { serverId, status: 'updated', detail: `runs ${version}` };
        return { serverId, status: 'stillOld', detail: `restarted, still on ${again.version}: install the ${version} agent program there` };
      } catch (err) {
        if (!(err instanceof AgentUnreachable)) throw err;
        last = err.message;
      }
    }
    return { serverId, status: 'unreachable', detail: last };
  }

  private async ask(serverId: string, checkOnly: boolean, bundle: BundleFile | null) {
    const value = { version: this.options.version, checkOnly, bundleSha256: bundle?.sha256 ?? '', bundleSize: String(bundle?.size ?? 0) };
    const reply = await this.options.agents.request(serverId, { request: { $case: 'agentRestart', value } });
    if (reply.error || !reply.agentRestart) throw new AgentUnreachable(serverId, reply.error || 'it does not know agent restarts');
    return reply.agentRestart;
  }
}
