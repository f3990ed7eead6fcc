import { PUBLIC_ONLY } from '@skiff/outbound';
import type { Logger } from 'pino';
import { AgentBundle } from './agents/agent-bundle.js';
import type { AgentControl } from './agents/outbound/control-client.js';
import { DailyCleanupJob } from './jobs/daily-cleanup.js';
import { type MonitoringStore, hostSettingsHandlers } from './routers/settings-host.js';
import {
  CLEANUP_REQUEST_TIMEOUT_MS,
  CleanupSchedules,
  DEFAULT_RELEASE_FEED_URL,
  type HostCleanupOptions,
  HostCleanupService,
  PlatformUpdates,
  type PlatformUpdatesOptions,
} from './services/host/index.js';
import type { PlatformSettingsService } from './services/settings/index.js';
import type { ServiceDeps } from './services/shared/index.js';

/** Operations on whole hosts (buildPlatform's `host` option). */
export interface HostOperationsOptions {
  /** The release feed settings.getUpdateData reads (`SKIFF_RELEASE_FEED_URL`); default DEFAULT_RELEASE_FEED_URL. */
  releaseFeedUrl?: string;
  feedTimeoutMs?: number;
  /** Begins a graceful restart of the process (main.ts); absent: settings.reloadServer is refused. */
  restart?: () => void;
  /** Called after every cleanup with what it removed: where the containerCleanup event is recorded. */
  onCleanup?: HostCleanupOptions['onCleanup'];
  /** Called at every start after the first (main.ts): where the platformRestart event is recorded. */
  onPlatformRestart?: (info: { version: string }) => Promise<void>;
  /** Confines every cleanup to objects with this label (`key=value`): tests on a shared engine only. */
  cleanupOnlyLabel?: string;
  /** How often the daily cleanup job looks for due servers (default 60 s); false: no job (tests drive it). */
  dailyCleanupTickMs?: number | false;
  /** The metrics store settings.cleanMonitoring empties, once one exists. */
  monitoring?: MonitoringStore;
  agentUpdates?: Pick<PlatformUpdatesOptions, 'agentReturnTimeoutMs' | 'agentPollMs'>;
  /** The agent program offered to agents for updates (`SKIFF_AGENT_BUNDLE`); absent: agents restart on their own. */
  agentBundlePath?: string;
}

/** Builds the host operations: their settings handlers, the daily cleanup job, and their close. */
export function buildHostOperations(
  deps: ServiceDeps,
  context: {
    version: string;
    log: Logger;
    controlClient: (timeoutMs?: number) => AgentControl;
    hostSettings: PlatformSettingsService;
    /** Whether an agent channel (NATS) runs: without it no agent can clean, so no daily job runs. */
    agentChannel: boolean;
  },
  options: HostOperationsOptions = {},
) {
  const log = context.log.child({ component: 'host-operations' });
  const cleanup = new HostCleanupService(deps, {
    agents: context.controlClient(CLEANUP_REQUEST_TIMEOUT_MS),
    onCleanup: options.onCleanup,
    onlyLabel: options.cleanupOnlyLabel,
    log,
  });
  const schedules = new CleanupSchedules(deps, context.hostSettings);
  const agentBundle = new AgentBundle(options.agentBundlePath);
  const updates = new PlatformUpdates(deps, {
    bundle: agentBundle,
    version: context.version,
    feedUrl: options.releaseFeedUrl ?? DEFAULT_RELEASE_FEED_URL,
    policy: deps.outbound ?? PUBLIC_ONLY,
    feedTimeoutMs: options.feedTimeoutMs,
    restart: options.restart,
    // An agent may first download the new program before it answers.
    agents: context.controlClient(60_000),
    log,
    ...options.agentUpdates,
  });
  const job = new DailyCleanupJob(schedules, cleanup, log);
  return {
    handlers: hostSettingsHandlers(deps.db, cleanup, schedules, updates, options.monitoring),
    cleanup,
    schedules,
    dailyCleanup: job,
    /** Served to agents by AgentArtifacts.FetchAgentBundle. */
    agentBundle,
    /** Starts the daily cleanup job (when an agent channel runs and the option allows). */
    start() {
      if (context.agentChannel && options.dailyCleanupTickMs !== false) job.start(options.dailyCleanupTickMs);
    },
    /** Says the platform started (main.ts, after first-boot setup): every start but the first is a platformRestart. */
    async started(firstBoot: boolean): Promise<void> {
      if (firstBoot) return;
      await options.onPlatformRestart?.({ version: context.version }).catch((err: unknown) => log.error({ err }, 'could not record the platformRestart event'));
    },
    close: () => job.stop(),
  };
}
