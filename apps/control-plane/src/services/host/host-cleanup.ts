import type { OutputOf, Contracts } from '@skiff/contracts';
import { LOCAL_SERVER_ID } from '@skiff/domain';
import type { HostCleanup } from '@skiff/proto';
import type { Logger } from 'pino';
import { type AgentControl, serverLabel } from '../../agents/outbound/control-client.js';
import type { Principal } from '../../authz/principal.js';
import { DomainError } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { assertHostAuthority } from './host-authority.js';

export type CleanupResult = OutputOf<Contracts['settings']['cleanAll']>;

/** The settings.clean* operations, and what each asks the agent to remove. */
export const CLEANUPS = {
  cleanUnusedImages: { images: true },
  cleanStoppedContainers: { stoppedContainers: true },
  cleanContainerBuilder: { buildCache: true },
  cleanContainerPrune: { stoppedContainers: true, danglingImages: true, buildCache: true },
  cleanUnusedVolumes: { volumes: true },
  cleanAll: { images: true, stoppedContainers: true, buildCache: true },
} satisfies Record<string, Partial<HostCleanup>>;

export type CleanupKind = keyof typeof CLEANUPS;

/** How long the agent waits for running builds and deploys before it gives up (nothing cleaned). */
export const CLEANUP_WAIT_MS = 10 * 60_000;
/** How long the control plane waits for the agent's answer: its wait, then the cleanup itself. */
export const CLEANUP_REQUEST_TIMEOUT_MS = CLEANUP_WAIT_MS + 5 * 60_000;

export interface HostCleanupOptions {
  /** A control client with a deadline of CLEANUP_REQUEST_TIMEOUT_MS. */
  agents: AgentControl;
  /** Called after every run (manual or daily) with what it removed: the containerCleanup event. */
  onCleanup?: (serverId: string, result: CleanupResult, trigger: CleanupKind | 'daily') => Promise<void>;
  log: Logger;
  /** Restricts every run to objects with this label (`key=value`); tests on a shared engine only. */
  onlyLabel?: string;
}

/**
 * Container-engine cleanups on a server's agent (control request HostCleanup, agent
 * control/host-cleanup.ts). The control plane tells the agent the names of the server's
 * workloads (applications, previews, compose stacks, caches: their volumes are named after
 * them) so that a stopped workload's volumes are kept too; the agent adds what its engine
 * says Skiff's services use.
 */
export class HostCleanupService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly options: HostCleanupOptions,
  ) {}

  async clean(p: Principal, kind: CleanupKind, input: { serverId?: string }): Promise<CleanupResult> {
    const serverId = await assertHostAuthority(this.deps.db, p, input.serverId);
    return this.run(serverId, kind, kind);
  }

  /** Runs a cleanup without a caller (the daily schedule). */
  async run(serverId: string, kind: CleanupKind, trigger: CleanupKind | 'daily' = kind): Promise<CleanupResult> {
    const request: HostCleanup = {
      images: false,
      danglingImages: false,
      stoppedContainers: false,
      buildCache: false,
      volumes: false,
      keepVolumeNames: [],
      keepAppNames: await this.workloadNames(serverId),
      keepImages: [],
      onlyLabel: this.options.onlyLabel ?? '',
      waitTimeoutMs: CLEANUP_WAIT_MS,
      ...CLEANUPS[kind],
    };
    const reply = await this.options.agents.request(serverId, { request: { $case: 'hostCleanup', value: request } });
    if (reply.error) throw new DomainError('BAD_REQUEST', `The agent of ${serverLabel(serverId)} did not clean: ${reply.error}`);
    if (!reply.hostCleanup) throw new DomainError('BAD_REQUEST', `The agent of ${serverLabel(serverId)} gave no cleanup answer (is it older than the control plane?)`);
    const { removedContainers, removedImages, removedVolumes, spaceFreed, waitedMs } = reply.hostCleanup;
    const result: CleanupResult = { serverId, removedContainers, removedImages, removedVolumes, spaceFreed: Number(spaceFreed), waitedMs };
    this.options.log.info(
      { serverId, kind, trigger, containers: removedContainers.length, images: removedImages.length, volumes: removedVolumes.length, spaceFreed: result.spaceFreed },
      'container cleanup done',
    );
    await this.options.onCleanup?.(serverId, result, trigger).catch((err: unknown) => {
      this.options.log.error({ err, serverId }, 'could not record the containerCleanup event');
    });
    return result;
  }

  /** The appNames of every workload that runs (or is stopped) on the server. */
  async workloadNames(serverId: string): Promise<string[]> {
    const db = this.deps.db;
    const local = serverId === LOCAL_SERVER_ID;
    const [apps, stacks, caches, previews] = await Promise.all([
      db.selectFrom('applications').select('appName').where((eb) => (local ? eb('serverId', 'is', null) : eb('serverId', '=', serverId))).execute(),
      db.selectFrom('composeStacks').select('appName').where((eb) => (local ? eb('serverId', 'is', null) : eb('serverId', '=', serverId))).execute(),
      db.selectFrom('cacheInstances').select('appName').where((eb) => (local ? eb('serverId', 'is', null) : eb('serverId', '=', serverId))).execute(),
      db
        .selectFrom('previewDeployments')
        .innerJoin('applications', 'applications.id', 'previewDeployments.applicationId')
        .select('previewDeployments.appName')
        .where((eb) => (local ? eb('applications.serverId', 'is', null) : eb('applications.serverId', '=', serverId)))
        .execute(),
    ]);
    return [...new Set([...apps, ...stacks, ...caches, ...previews].map((r) => r.appName))].sort();
  }
}
