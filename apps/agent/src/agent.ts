/**
 * The agent's command path, assembled from its parts: JetStream consumer → intake (journal,
 * de-duplication) → scheduler (per-workload FIFO, deploy slots) → runner → handlers, with
 * reports going out through `reports`. main.ts builds the connections and hands them in;
 * tests build the same thing against real NATS, Docker and an in-test gRPC server.
 */
import type { RegistryRemoval } from './deployments/server-registry-teardown.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { CommandKind, timestampToDate } from '@skiff/proto';
import type { CommandVerifier } from '@skiff/domain';
import type { Logger } from 'pino';
import type { ComposeSettings } from './compose/cli.js';
import { type AgentRestarter, CommandControl } from './control/command-control.js';
import { HostCleanupControl } from './control/host-cleanup.js';
import { ContainerControl } from './control/container-control.js';
import { LogStreams, type LogStreamsDeps } from './control/log-streams.js';
import { ClusterControl } from './control/cluster-control.js';
import { ProxyControl } from './control/proxy-control.js';
import { ControlResponder } from './control/responder.js';
import type { ContainerOps } from './docker/container-ops.js';
import type { DockerDriver } from './docker/driver.js';
import type { DatabaseContainers } from './dumps/database-containers.js';
import type { VolumeContainers } from './dumps/volume-containers.js';
import type { ScratchDatabases } from './dumps/scratch-databases.js';
import { type ContainerLister, RELAY_CONTAINERS, SCRATCH_CONTAINERS, VOLUME_TOOL_CONTAINERS, removeLeftovers } from './dumps/throwaway-leftovers.js';
import type { DeployApplicationDeps } from './handlers/deploy-application.js';
import type { DeployComposeDeps } from './handlers/deploy-compose.js';
import type { SwarmNodes } from './docker/swarm-nodes.js';
import type { WorkloadCommandDeps } from './handlers/workload-handler.js';
import { CommandConsumer, type CommandConsumerOptions } from './pipeline/consumer.js';
import { CommandIntake } from './pipeline/intake.js';
import { lazyHandler } from './pipeline/lazy-handler.js';
import type { CommandJournal } from './pipeline/journal.js';
import type { Reports } from './pipeline/reports.js';
import { handlerRegistry, reReport, runCommand, type HandlerRegistry } from './pipeline/runner.js';
import { RunningCommands } from './pipeline/running-commands.js';
import { CommandScheduler } from './pipeline/scheduler.js';
import type { ProxyConfigLoader } from './proxy/config-loader.js';
import { CrashLoopWatcher, type CrashLoopWatcherDeps } from './deployments/crash-loops.js';
import type { CleanupEngine } from './docker/dockerode-cleanup.js';

export interface AgentDeps {
  serverId: string;
  nc: NatsConnection;
  /** The control plane's command key, pinned at join: commands and control requests it did not sign are refused. */
  verifier: CommandVerifier;
  driver: DockerDriver;
  journal: CommandJournal;
  reports: Reports;
  log: Logger;
  maxConcurrentDeploys: number;
  now?: () => Date;
  /** Tuning of the deploy handler (poll interval, rollout timeout) and how it builds (build settings). */
  deploy?: Pick<DeployApplicationDeps, 'pollIntervalMs' | 'rolloutTimeoutMs' | 'build' | 'cluster'>;
  /** Tuning of the stop, start, reload and remove handlers (poll interval, longest wait, settle time). */
  workload?: Pick<WorkloadCommandDeps, 'pollIntervalMs' | 'waitTimeoutMs' | 'settleMs'>;
  /**
   * How compose stacks run on this server (DeployCompose, and the workload commands of kind
   * COMPOSE), and the tuning of their deploy; absent: those commands fail saying so.
   */
  compose?: ComposeSettings & Pick<DeployComposeDeps, 'pollIntervalMs' | 'settleMs'>;
  /**
   * The server's reverse proxy: the loader of its config and its container's name; absent:
   * ApplyProxyConfig commands and proxy requests are refused. `timeoutMs`: longest load of
   * an ApplyProxyConfig; `controlTimeoutMs`: of a proxy request (proxy-control.ts).
   */
  proxy?: { loader: ProxyConfigLoader; containerName: string; timeoutMs?: number; controlTimeoutMs?: number };
  /** Tuning of the crash loop watcher (rule, interval); `false`: no watcher. Default: on when `reports` takes crash loops. */
  crashLoops?: Pick<CrashLoopWatcherDeps, 'rule' | 'intervalMs' | 'logLines'> | false;
  /** This agent's version and how it restarts for settings.updateServer (main.ts); absent: refused. */
  restart?: AgentRestarter;
  /** The engine host cleanups (settings.clean*) read and remove through; absent: they are refused. */
  cleanup?: CleanupEngine;
  /** The container.* reads and runtime logs (container requests, log streams); absent: refused. */
  containers?: ContainerOps;
  /** Tuning of log streams (chunk deadline, heartbeat, batching). */
  logStreams?: Pick<LogStreamsDeps, 'chunkTimeoutMs' | 'heartbeatMs' | 'batchMs' | 'presenceMs'>;
  /** The database containers dumps and restores run their tools in; absent: DumpDatabase and RestoreDatabase are rejected. */
  databases?: DatabaseContainers;
  /** The throw-away containers of volume backups and restores (with `databases`, which runs their tools); absent: BackupVolume and RestoreVolume are rejected. */
  volumes?: VolumeContainers;
  /** The throw-away database containers of verifications (with `databases`); absent: VerifyDatabase is rejected. */
  scratch?: ScratchDatabases;
  /**
   * Where the throw-away containers of `scratch` and `volumes` that an earlier run left are
   * looked for at start (throwaway-leftovers.ts; main.ts: the engine's socket); absent: not looked for.
   */
  leftovers?: ContainerLister;
  /** The OWNER_LABEL value of this agent's throw-away containers (throwaway-owner.ts); default: `serverId`. */
  throwawayOwner?: string;
  /** The nodes of the engine's swarm, for cluster requests; absent: they are refused. */
  nodes?: SwarmNodes;
  /** Removes the server registry when the swarm is back to one node (server-registry-teardown.ts). */
  removeServerRegistry?: () => Promise<RegistryRemoval>;
  /** Tuning of the NATS consumer (backoff, ack wait). */
  consumer?: Pick<CommandConsumerOptions, 'retryInitialMs' | 'retryMaxMs' | 'ackWaitMs' | 'nakDelayMs'>;
}

export class Agent {
  private readonly abort = new AbortController();
  private readonly handlers: HandlerRegistry;
  private readonly scheduler: CommandScheduler;
  private readonly consumer: CommandConsumer;
  private readonly intake: CommandIntake;
  /** Running commands, cancellable through the control responder (control requests on `agent.<id>.ctl`). */
  private readonly running = new RunningCommands();
  private readonly control: ControlResponder;
  private controlStarted: Promise<void> | null = null;
  /** Runtime log streams asked for by the control plane (control/log-streams.ts). */
  readonly logStreams: LogStreams | null;
  private stopping: Promise<void> | null = null;
  private readonly crashLoops: CrashLoopWatcher | null;
  /** Resolves when the throw-away containers of an earlier run were looked for (and removed) at start. */
  leftoversSwept: Promise<void> | null = null;

  constructor(private readonly deps: AgentDeps) {
    const { journal, reports, log, now } = deps;
    const workload: WorkloadCommandDeps = { driver: deps.driver, now, ...deps.workload, compose: deps.compose };
    // Each handler's module is imported with the first command of its kind (lazy-handler.ts).
    const proxy = deps.proxy;
    this.handlers = handlerRegistry([
      lazyHandler({ kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION, payloadCase: 'deployApplication', takesSlot: true }, async () =>
        (await import('./handlers/deploy-application.js')).deployApplicationHandler({ driver: deps.driver, journal, reports, now, ...deps.deploy }),
      ),
      lazyHandler({ kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE, payloadCase: 'deployCompose', takesSlot: true }, async () =>
        (await import('./handlers/deploy-compose.js')).deployComposeHandler({
          driver: deps.driver,
          journal,
          reports,
          now,
          compose: deps.compose,
          pollIntervalMs: deps.compose?.pollIntervalMs,
          settleMs: deps.compose?.settleMs,
        }),
      ),
      lazyHandler({ kind: CommandKind.COMMAND_KIND_STOP_WORKLOAD, payloadCase: 'stopWorkload', takesSlot: false }, async () =>
        (await import('./handlers/stop-workload.js')).stopWorkloadHandler(workload),
      ),
      lazyHandler({ kind: CommandKind.COMMAND_KIND_START_WORKLOAD, payloadCase: 'startWorkload', takesSlot: false }, async () =>
        (await import('./handlers/start-workload.js')).startWorkloadHandler(workload),
      ),
      lazyHandler({ kind: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD, payloadCase: 'reloadWorkload', takesSlot: false }, async () =>
        (await import('./handlers/reload-workload.js')).reloadWorkloadHandler(workload),
      ),
      lazyHandler({ kind: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD, payloadCase: 'removeWorkload', takesSlot: false }, async () =>
        (await import('./handlers/remove-workload.js')).removeWorkloadHandler(workload),
      ),
      ...(deps.databases
        ? [
            lazyHandler({ kind: CommandKind.COMMAND_KIND_DUMP_DATABASE, payloadCase: 'dumpDatabase', takesSlot: false }, async () =>
              (await import('./handlers/dump-database.js')).dumpDatabaseHandler({ containers: deps.databases! }),
            ),
            lazyHandler({ kind: CommandKind.COMMAND_KIND_RESTORE_DATABASE, payloadCase: 'restoreDatabase', takesSlot: false }, async () =>
              (await import('./handlers/restore-database.js')).restoreDatabaseHandler({ containers: deps.databases! }),
            ),
          ]
        : []),
      ...(deps.databases && deps.scratch
        ? [
            lazyHandler({ kind: CommandKind.COMMAND_KIND_VERIFY_DATABASE, payloadCase: 'verifyDatabase', takesSlot: false }, async () =>
              (await import('./handlers/verify-database.js')).verifyDatabaseHandler({ containers: deps.databases!, scratch: deps.scratch! }),
            ),
          ]
        : []),
      ...(deps.databases && deps.volumes
        ? [
            lazyHandler({ kind: CommandKind.COMMAND_KIND_BACKUP_VOLUME, payloadCase: 'backupVolume', takesSlot: false }, async () =>
              (await import('./handlers/backup-volume.js')).backupVolumeHandler({ containers: deps.databases!, volumes: deps.volumes! }),
            ),
            lazyHandler({ kind: CommandKind.COMMAND_KIND_RESTORE_VOLUME, payloadCase: 'restoreVolume', takesSlot: false }, async () =>
              (await import('./handlers/restore-volume.js')).restoreVolumeHandler({ containers: deps.databases!, volumes: deps.volumes! }),
            ),
          ]
        : []),
      ...(proxy
        ? [
            lazyHandler({ kind: CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG, payloadCase: 'applyProxyConfig', takesSlot: false }, async () =>
              (await import('./handlers/apply-proxy-config.js')).applyProxyConfigHandler({ serverId: deps.serverId, now, loader: proxy.loader, timeoutMs: proxy.timeoutMs }),
            ),
          ]
        : []),
    ]);
    this.scheduler = new CommandScheduler({
      maxSlots: deps.maxConcurrentDeploys,
      run: ({ id }) =>
        runCommand(id, { journal, reports, handlers: this.handlers, log, signal: this.abort.signal, running: this.running, now }).catch((err: unknown) => {
          // Only the journal failing gets here: the command stays unfinished and runs at the next start.
          log.error({ err, commandId: id }, 'command could not be run to its end');
        }),
    });
    this.intake = new CommandIntake({
      serverId: deps.serverId,
      journal,
      reports,
      handlers: this.handlers,
      schedule: (entry) => this.schedule(entry.id),
      log,
      now,
    });
    this.logStreams = deps.containers ? new LogStreams({ nc: deps.nc, serverId: deps.serverId, ops: deps.containers, log, ...deps.logStreams }) : null;
    this.control = new ControlResponder({
      nc: deps.nc,
      serverId: deps.serverId,
      verifier: deps.verifier,
      log,
      control: new CommandControl({
        scheduler: this.scheduler,
        running: this.running,
        journal,
        reports,
        handlers: this.handlers,
        log,
        now,
        proxy: deps.proxy
          ? new ProxyControl({ loader: deps.proxy.loader, driver: deps.driver, containerName: deps.proxy.containerName, log, timeoutMs: deps.proxy.controlTimeoutMs })
          : undefined,
        restart: deps.restart,
        hostCleanup: deps.cleanup ? new HostCleanupControl({ engine: deps.cleanup, slots: this.scheduler, log }) : undefined,
        containers: deps.containers ? new ContainerControl({ ops: deps.containers, log }) : undefined,
        logs: this.logStreams ?? undefined,
        cluster: deps.nodes ? new ClusterControl({ nodes: deps.nodes, log, removeServerRegistry: deps.removeServerRegistry }) : undefined,
      }),
    });
    this.consumer = new CommandConsumer({
      nc: deps.nc,
      serverId: deps.serverId,
      verifier: deps.verifier,
      log,
      onMessage: (data, msgId) => this.intake.receive(data, msgId),
      ...deps.consumer,
    });
    const reportCrashLoop = reports.reportCrashLoop?.bind(reports);
    this.crashLoops =
      deps.crashLoops === false || !reportCrashLoop
        ? null
        : new CrashLoopWatcher({ driver: deps.driver, report: reportCrashLoop, log: log.child({ part: 'crash-loops' }), now, ...deps.crashLoops });
  }

  /**
   * Reports again what an earlier process finished but could not deliver (the control plane
   * was away when it stopped), queues what it left unfinished (in the order it came), then consumes.
   */
  start(): void {
    const undelivered = this.deps.journal.undelivered();
    if (undelivered.length > 0) this.deps.log.info({ count: undelivered.length }, 'reporting again the results the last run could not deliver');
    for (const entry of undelivered) reReport(entry, this.deps.reports);
    const pending = this.deps.journal.unfinished();
    if (pending.length > 0) this.deps.log.info({ count: pending.length }, 'resuming commands left unfinished by the last run');
    for (const entry of pending) this.schedule(entry.id);
    this.leftoversSwept ??= this.removeLeftovers();
    this.consumer.start();
    this.crashLoops?.start();
    this.controlStarted ??= this.control.start().catch((err: unknown) => {
      this.deps.log.error({ err }, 'could not subscribe to control requests');
    });
  }

  /** Resolves when the NATS consumer is bound (the first time). */
  ready(): Promise<void> {
    return Promise.all([this.consumer.ready(), this.controlStarted]).then(() => {});
  }

  /** Resolves when no command waits or runs. */
  idle(): Promise<void> {
    return this.scheduler.idle();
  }

  /**
   * Stops consuming, abandons the running commands (they stay `started` in the journal and
   * run again at the next start) and waits for them to let go. Waiting commands stay queued
   * in the journal.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.consumer.stop();
      await this.crashLoops?.stop();
      await this.control.stop();
      this.logStreams?.stopAll();
      this.abort.abort();
      await this.scheduler.stop();
      await this.leftoversSwept;
    })();
    return this.stopping;
  }

  /**
   * Throw-away containers (verifications, volume archives) whose command will not run its
   * handler again: once at start, off the command path. A command still running, or
   * unfinished before its deadline (its rerun replaces them), keeps its own.
   */
  private async removeLeftovers(): Promise<void> {
    const now = this.deps.now ?? (() => new Date());
    const liveCommands = () =>
      this.deps.journal
        .unfinished()
        .filter((e) => this.running.get(e.id) || !e.command?.deadline || timestampToDate(e.command.deadline).getTime() > now().getTime())
        .map((e) => e.id);
    const kinds = [
      { containers: SCRATCH_CONTAINERS, port: this.deps.scratch },
      { containers: VOLUME_TOOL_CONTAINERS, port: this.deps.volumes },
      { containers: RELAY_CONTAINERS, port: this.deps.databases },
    ];
    for (const { containers, port } of kinds) {
      if (!port || !this.deps.leftovers) continue;
      try {
        const removed = await removeLeftovers(this.deps.leftovers, containers, this.deps.throwawayOwner ?? this.deps.serverId, liveCommands, (id) => port.remove(id));
        if (removed.length > 0) this.deps.log.info({ containers: removed }, 'removed the throw-away containers of commands that will not run again');
      } catch (err) {
        this.deps.log.warn({ err }, 'could not look for leftover throw-away containers');
      }
    }
  }

  private schedule(id: string): boolean {
    const entry = this.deps.journal.get(id);
    if (!entry || entry.state === 'finished') return false;
    const handler = entry.command ? this.handlers.get(entry.command.kind) : undefined;
    return this.scheduler.enqueue({
      id,
      workloadKey: entry.workloadKey || `command:${id}`,
      takesSlot: handler?.takesSlot ?? false,
    });
  }
}
