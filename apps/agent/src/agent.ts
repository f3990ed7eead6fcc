/**
 * The agent's command path, assembled from its parts: JetStream consumer → intake (journal,
 * de-duplication) → scheduler (per-workload FIFO, deploy slots) → runner → handlers, with
 * reports going out through `reports`. main.ts builds the connections and hands them in;
 * tests build the same thing against real NATS, Docker and an in-test gRPC server.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandVerifier } from '@skiff/domain';
import type { Logger } from 'pino';
import type { ComposeSettings } from './compose/cli.js';
import { ClusterControl } from './control/cluster-control.js';
import { CommandControl } from './control/command-control.js';
import { ProxyControl } from './control/proxy-control.js';
import { ControlResponder } from './control/responder.js';
import type { DockerDriver } from './docker/driver.js';
import type { SwarmNodes } from './docker/swarm-nodes.js';
import { applyProxyConfigHandler } from './handlers/apply-proxy-config.js';
import { deployApplicationHandler, type DeployApplicationDeps } from './handlers/deploy-application.js';
import { deployComposeHandler, type DeployComposeDeps } from './handlers/deploy-compose.js';
import { reloadWorkloadHandler } from './handlers/reload-workload.js';
import { removeWorkloadHandler } from './handlers/remove-workload.js';
import { startWorkloadHandler } from './handlers/start-workload.js';
import { stopWorkloadHandler } from './handlers/stop-workload.js';
import type { WorkloadCommandDeps } from './handlers/workload-handler.js';
import { CommandConsumer, type CommandConsumerOptions } from './pipeline/consumer.js';
import { CommandIntake } from './pipeline/intake.js';
import type { CommandJournal } from './pipeline/journal.js';
import type { Reports } from './pipeline/reports.js';
import { handlerRegistry, runCommand, type HandlerRegistry } from './pipeline/runner.js';
import { RunningCommands } from './pipeline/running-commands.js';
import { CommandScheduler } from './pipeline/scheduler.js';
import type { ProxyConfigLoader } from './proxy/config-loader.js';

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
  /** The nodes of the engine's swarm, for cluster requests; absent: they are refused. */
  nodes?: SwarmNodes;
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
  private stopping: Promise<void> | null = null;

  constructor(private readonly deps: AgentDeps) {
    const { journal, reports, log, now } = deps;
    const workload: WorkloadCommandDeps = { driver: deps.driver, now, ...deps.workload, compose: deps.compose };
    this.handlers = handlerRegistry([
      deployApplicationHandler({ driver: deps.driver, journal, reports, now, ...deps.deploy }),
      deployComposeHandler({
        driver: deps.driver,
        journal,
        reports,
        now,
        compose: deps.compose,
        pollIntervalMs: deps.compose?.pollIntervalMs,
        settleMs: deps.compose?.settleMs,
      }),
      stopWorkloadHandler(workload),
      startWorkloadHandler(workload),
      reloadWorkloadHandler(workload),
      removeWorkloadHandler(workload),
      ...(deps.proxy ? [applyProxyConfigHandler({ serverId: deps.serverId, now, loader: deps.proxy.loader, timeoutMs: deps.proxy.timeoutMs })] : []),
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
        cluster: deps.nodes ? new ClusterControl({ nodes: deps.nodes, log }) : undefined,
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
  }

  /** Queues what an earlier process left unfinished (in the order it came), then consumes. */
  start(): void {
    const pending = this.deps.journal.unfinished();
    if (pending.length > 0) this.deps.log.info({ count: pending.length }, 'resuming commands left unfinished by the last run');
    for (const entry of pending) this.schedule(entry.id);
    this.consumer.start();
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
      await this.control.stop();
      this.abort.abort();
      await this.scheduler.stop();
    })();
    return this.stopping;
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
