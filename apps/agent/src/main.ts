// Composition root of the Skiff agent: configuration → credential (joining with a one-time
// token when that is how it was started) → the control plane's command key, pinned at the
// first start or a join (command-key.ts; no key, no start) → journal → report client (gRPC), registration and
// heartbeats → Docker driver, adopting what runs → NATS → the Compose program this server has
// (compose/program.ts) → the command path (agent.ts).
//
// In NATS operator mode the registration hands out the agent's NATS credentials; the newest
// are kept in the data directory. With kept ones the agent connects to NATS at once and
// registers in the background, so a restart while the control plane is down still resumes
// and consumes its commands; without (a first start, or an open NATS) it waits for the first
// registration. A control plane that refuses the credential (revoked, server removed) ends
// the agent with exit code 1 and what to do; unreachable, it is retried forever.
//
// NATS and the control plane may be unreachable at start or at any later moment: the NATS
// connection waits and reconnects, the consumer waits for its stream, reports queue up and
// are retried. SIGTERM (or SIGINT) stops consuming, abandons the running command (it stays
// in the journal and runs again at the next start), delivers what reports it can within a
// few seconds, and exits 0. Secrets (the credential, NATS passwords, env values) are never
// logged.
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { RESTART_EXIT_CODE, type RemovedServerWorkloads, logRedaction, removedServerWorkloads, serverRemovedDetails } from '@skiff/domain';
import { pino, type Logger } from 'pino';
import { Agent } from './agent.js';
import { type ChannelSecurity, channelCa, channelSecurity } from './channel-ca.js';
import { dockerCliOf } from './build/settings.js';
import { BuildCap } from './build/build-cap.js';
import { pinCommandKey } from './command-key.js';
import { CommandJournal } from './pipeline/journal.js';
import { detectComposeProgram } from './compose/program.js';
import { ConfigError, describeConfig, readConfig, type AgentConfig } from './config.js';
import { CredentialError, RegistrationRefusedError, obtainCredential, readStoredNatsCredentials, storeNatsCredentials } from './credential.js';
import { LazyDockerDriver } from './docker/lazy-driver.js';
import { ServerRegistry } from './deployments/server-registry.js';
import { removeServerRegistry } from './deployments/server-registry-teardown.js';
import type { RegistryObjects } from './docker/registry-objects.js';
import { dockerodeAt, loadedOnFirstCall } from './docker/lazy.js';
import type { CleanupEngine } from './docker/dockerode-cleanup.js';
import type { ContainerOps } from './docker/container-ops.js';
import type { DatabaseContainers } from './dumps/database-containers.js';
import type { VolumeContainers } from './dumps/volume-containers.js';
import { EngineSocket } from './docker/engine-socket.js';
import type { ScratchDatabases } from './dumps/scratch-databases.js';
import type { SwarmNodes } from './docker/swarm-nodes.js';
import type { ClusterRegistry } from './deployments/cluster-image.js';
import { connectNats } from './nats/connect.js';
import { ProxyConfigLoader } from './proxy/config-loader.js';
import { ProxyManager } from './proxy/proxy-manager.js';
import { adoptWorkloads } from './reconcile/adopt.js';
import { HostStats } from './reconcile/host-stats.js';
import { MetricsSampler } from './reconcile/metrics-sampler.js';
import { EngineStatsStreams } from './docker/stats-streams.js';
import { ArtifactClient } from './reports/artifacts.js';
import { installAgentBundle } from './reports/bundle-install.js';
import { ReportClient } from './reports/client.js';
import { AgentPresence } from './reports/presence.js';
import { leaveMachine } from './removed-server.js';
import { throwawayOwner } from './dumps/throwaway-owner.js';
import { AGENT_VERSION } from './version.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandVerifier } from '@skiff/domain';

const REMOVAL_ACTIONS: Record<RemovedServerWorkloads, string> = {
  none: 'removing the proxy container',
  remove: 'removing the proxy container and the workloads Skiff ran here',
  leaveRunning: 'leaving the workloads and the proxy container running',
};

const STOP_COMMANDS_MS = 20_000;
const FLUSH_REPORTS_MS = 5_000;
const CLOSE_NATS_MS = 5_000;
const STOP_PROXY_WATCH_MS = 5_000;
const DOCKER_VERSION_MS = 5_000;

async function main(): Promise<void> {
  // Every field that can hold a secret is redacted (libs/domain log-redaction.ts).
  // Written synchronously: lines keep their order and none is lost when the agent exits.
  const bootLog = pino({ name: 'skiff-agent', ...logRedaction() }, pino.destination({ dest: 1, sync: true }));
  let config: AgentConfig;
  try {
    config = readConfig(process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    bootLog.fatal({ issues: err.issues }, 'invalid configuration');
    process.exit(1);
  }
  const log = bootLog.child({ serverId: config.serverId }, { level: config.logLevel });
  let security: ChannelSecurity;
  try {
    security = channelSecurity(config, await channelCa(config));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    bootLog.fatal({ issues: err.issues }, 'invalid configuration');
    process.exit(1);
  }
  log.info({ channel: security.describe }, 'agent channel security');

  let stopping = false;
  let agent: Agent | null = null;
  let nc: NatsConnection | null = null;
  let journal: CommandJournal | null = null;
  let reports: ReportClient | null = null;
  let artifacts: ArtifactClient | null = null;
  let presence: AgentPresence | null = null;
  let proxy: ProxyManager | null = null;
  let sampler: MetricsSampler | null = null;
  // The server was removed from the control plane: the agent does to the machine what the
  // removal said (removed-server.ts) and stops (exit 0: a restart would only be told again).
  const removed = async (workloads: RemovedServerWorkloads): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.warn({ reason: serverRemovedDetails(workloads) }, `this server was removed from the control plane: ${REMOVAL_ACTIONS[workloads]} and stopping (join it again to use it)`);
    presence?.stop();
    await sampler?.stop();
    await shutDown(log, { agent, proxy, reports: null, journal, nc });
    reports?.close();
    await leaveMachine(driver, log, workloads, config.proxy.container, () => removeServerRegistry(registryObjects)).catch((err: unknown) =>
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'could not clean the machine up'),
    );
    log.info('agent stopped: the server was removed');
    process.exit(0);
  };
  // A refused credential ends the agent: no retry would change it, and nothing it does reaches the control plane.
  const refused = async (err: RegistrationRefusedError): Promise<void> => {
    const removal = removedServerWorkloads(err.reason);
    if (removal) return removed(removal);
    if (stopping) return;
    stopping = true;
    log.fatal({ code: err.code, reason: err.reason, problem: err.message }, 'registration refused: join again with a new token from server.regenerateJoinToken');
    presence?.stop();
    await sampler?.stop();
    await shutDown(log, { agent, proxy, reports: null, journal, nc });
    reports?.close();
    process.exit(1);
  };
  // `update` (settings.updateServer): the same orderly stop, then RESTART_EXIT_CODE for the supervisor.
  const stop = async (signal: NodeJS.Signals | 'update'): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'agent stopping');
    presence?.stop();
    await sampler?.stop();
    await shutDown(log, { agent, proxy, reports, journal, nc });
    log.info({ signal }, 'agent stopped');
    process.exit(signal === 'update' ? RESTART_EXIT_CODE : 0);
  };
  // Handlers go in before anything that waits, so a signal at any moment stops cleanly.
  process.once('SIGTERM', (s) => void stop(s));
  process.once('SIGINT', (s) => void stop(s));

  // dockerode is loaded by the first command that needs it (lazy-driver.ts).
  const driver = new LazyDockerDriver({ socketPath: config.dockerSocket, requestTimeoutMs: 60_000 });
  const registryObjects = loadedOnFirstCall<RegistryObjects>(async () => new (await import('./docker/registry-objects.js')).DockerodeRegistryObjects(await dockerodeAt(config.dockerSocket, 60_000)));
  const swarmNodes = loadedOnFirstCall<SwarmNodes>(async () => new (await import('./docker/swarm-nodes.js')).DockerodeSwarmNodes(await dockerodeAt(config.dockerSocket, 60_000)));
  let keeping = Promise.resolve();
  presence = new AgentPresence({
    target: config.controlPlaneGrpc,
    channelCredentials: security.grpc,
    serverId: config.serverId,
    info: { agentVersion: AGENT_VERSION, hostname: hostname(), dockerVersion: await dockerVersion(driver, log) },
    log,
    onRemoved: (workloads) => void removed(workloads),
    // One write after the other, so the newest registration's credentials are the ones kept.
    onNatsCredentials: (nats) => {
      keeping = keeping
        .then(() => storeNatsCredentials(config.dataDir, config.serverId, nats))
        .catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not keep the NATS credentials of the registration'));
    },
  });
  log.info({ config: describeConfig(config) }, 'agent starting: registering with the control plane');
  let registeredInBackground = false;
  let verifier: CommandVerifier;
  try {
    let joined = false;
    const credential = await obtainCredential({
      config,
      join: (token) => presence!.join(token),
      note: (what, detail) => {
        if (what === 'joined') joined = true;
        if (what === 'join-refused-using-stored') log.warn({ reason: detail }, 'join token refused: using the credential stored by an earlier join');
        else if (what === 'stored') log.info('using the credential stored by an earlier join');
      },
    });
    if (stopping) return;
    // Commands are run only when signed with the control plane's key this agent pinned.
    const pinned = await pinCommandKey(config, joined);
    verifier = pinned.verifier;
    log.info({ keyId: verifier.keyId, how: pinned.how }, 'commands must be signed by this control plane key');
    journal = await CommandJournal.open(config.dataDir, {
      onSkippedLines: (count) => log.warn({ count }, 'unreadable journal lines skipped (a write cut short by a crash)'),
      compactAfterMs: config.journalCompactMs,
      onCompactionError: (err) => log.warn({ err }, 'could not compact the command journal; it is compacted again when the next command finishes'),
    });
    const journaled = journal;
    reports = new ReportClient({
      target: config.controlPlaneGrpc,
      credential,
      log,
      channelCredentials: security.grpc,
      onResultSettled: (commandId) => void journaled.delivered(commandId).catch((err: unknown) => log.warn({ commandId, err: (err as Error).message }, 'could not journal a delivered result; it is sent again at the next start')),
    });
    artifacts = new ArtifactClient({ target: config.controlPlaneGrpc, credential, channelCredentials: security.grpc });
    const storedNats = await readStoredNatsCredentials(config.dataDir, config.serverId);
    presence.useStoredNatsCredentials(storedNats);
    const registration = presence.start(credential);
    if (storedNats) {
      registeredInBackground = true;
      registration.catch((err: unknown) => {
        if (stopping) return;
        if (err instanceof RegistrationRefusedError) return void refused(err);
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'registration failed');
      });
    } else {
      // NATS may need the credentials the registration hands out, so it comes first.
      await registration;
    }
  } catch (err) {
    if (stopping) return;
    if (err instanceof RegistrationRefusedError) return refused(err);
    if (!(err instanceof CredentialError)) throw err;
    log.fatal({ problem: err.message }, 'cannot start');
    process.exit(1);
  }
  // What runs is adopted as it is; an engine that does not answer yet is no reason not to start.
  await adoptWorkloads(driver, log).catch((err: unknown) =>
    log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not list the workloads on this engine'),
  );
  if (stopping) return;
  // The proxy runs once the server has had a config: brought up (and watched) by the first
  // ApplyProxyConfig, or here when an earlier run left one.
  proxy = new ProxyManager({
    driver,
    dataDir: config.dataDir,
    log,
    ports: { http: config.proxy.httpPort, https: config.proxy.httpsPort, hostIp: config.proxy.bind },
    dashboard: config.proxy.dashboardPort !== 0 ? { port: config.proxy.dashboardPort, hostIp: config.proxy.dashboardBind } : null,
    containerName: config.proxy.container,
    volumeName: `${config.proxy.container}-data`,
  });
  if (existsSync(proxy.lastGoodPath)) void proxy.start();
  if (registeredInBackground) log.info('using the NATS credentials of the last registration: connecting to NATS, registering in the background');
  else log.info('agent registered: connecting to NATS');

  const connection = await connectNats(config.natsServers, `skiff-agent ${config.serverId}@${hostname()}`, log, presence.natsCredentials() ? () => presence!.natsCredentials() : undefined, security.nats);
  if (stopping) {
    await connection.close();
    return;
  }
  nc = connection;
  const dockerCli = dockerCliOf(config.dockerCli);
  const composeProgram = await detectComposeProgram({
    dockerCli,
    configured: config.composeProgram,
    env: { PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', DOCKER_HOST: `unix://${config.dockerSocket}` },
  });
  if (composeProgram.program) log.info({ program: composeProgram.program.name, version: composeProgram.program.version }, 'compose stacks run with this Compose program');
  else log.warn({ problem: composeProgram.missing }, 'no Compose program: container-compose stacks cannot be deployed (Swarm stacks can)');
  const buildCap = new BuildCap({
    cpus: config.buildCap.cpus ?? Math.max(1, Math.floor(availableParallelism() / 2)),
    memoryBytes: config.buildCap.memoryBytes,
    cgroup: config.buildCap.cgroup,
  });
  log.info({ cap: buildCap.describe(), cgroup: config.buildCap.cgroup }, 'builds run under this cap');
  const throwawayOwnerId = await throwawayOwner(config.dataDir, config.serverId);
  agent = new Agent({
    serverId: config.serverId,
    throwawayOwner: throwawayOwnerId,
    nc,
    verifier,
    driver,
    journal,
    reports,
    log,
    maxConcurrentDeploys: config.maxConcurrentDeploys,
    // Log streams read without the request timeout, which would cut a quiet followed log.
    containers: loadedOnFirstCall<ContainerOps>(async () =>
      new (await import('./docker/container-ops.js')).DockerodeContainerOps(await dockerodeAt(config.dockerSocket, 60_000), await dockerodeAt(config.dockerSocket)),
    ),
    nodes: swarmNodes,
    removeServerRegistry: () => removeServerRegistry(registryObjects),
    proxy: { loader: new ProxyConfigLoader({ proxy, settings: config.proxy, log }), containerName: proxy.containerName },
    // Without the request timeout: a dump's output is read for as long as the dump runs.
    databases: loadedOnFirstCall<DatabaseContainers>(async () =>
      new (await import('./dumps/database-containers.js')).DockerodeDatabaseContainers(await dockerodeAt(config.dockerSocket), { owner: throwawayOwnerId }),
    ),
    volumes: loadedOnFirstCall<VolumeContainers>(async () =>
      new (await import('./dumps/volume-containers.js')).DockerodeVolumeContainers(await dockerodeAt(config.dockerSocket, 60_000), { owner: throwawayOwnerId }),
    ),
    // Read at start over the socket: a Docker client is loaded only when one is left to remove.
    leftovers: new EngineSocket({ socketPath: config.dockerSocket, timeoutMs: 60_000 }),
    scratch: loadedOnFirstCall<ScratchDatabases>(async () =>
      new (await import('./dumps/scratch-databases.js')).DockerodeScratchDatabases(await dockerodeAt(config.dockerSocket, 60_000), { owner: throwawayOwnerId }),
    ),
    cleanup: loadedOnFirstCall<CleanupEngine>(async () => new (await import('./docker/dockerode-cleanup.js')).DockerodeCleanupEngine(await dockerodeAt(config.dockerSocket, 60_000))),
    restart: {
      version: AGENT_VERSION,
      begin: () => void stop('update'),
      // The program file this process runs (`node … skiff-agent.mjs`): replaced by the control plane's.
      install: artifacts && process.argv[1] ? (bundle) => installAgentBundle(artifacts!, process.argv[1]!, bundle) : undefined,
    },
    deploy: {
      cluster: {
        nodes: swarmNodes,
        registry: clusterRegistry(config.clusterRegistry),
        serverRegistry: new ServerRegistry({ driver, settings: config.serverRegistry, dataDir: config.dataDir, objects: registryObjects }),
      },
      build: {
        dataDir: config.dataDir,
        dockerCli,
        dockerSocket: config.dockerSocket,
        timeoutMs: config.buildTimeoutMs,
        artifacts: artifacts ?? undefined,
        cap: buildCap,
      },
    },
    compose: {
      dataDir: config.dataDir,
      dockerCli,
      dockerSocket: config.dockerSocket,
      program: composeProgram,
      timeoutMs: config.buildTimeoutMs,
    },
  });
  agent.start();
  log.info('agent started: connected to NATS');
  if (config.metricsIntervalMs > 0 && reports) {
    const sink = reports;
    sampler = new MetricsSampler({
      host: new HostStats({ diskPath: config.dataDir }),
      streams: new EngineStatsStreams(config.dockerSocket),
      send: (batch) => sink.sendMetrics(batch),
      intervalMs: config.metricsIntervalMs,
      log,
    });
    sampler.start();
    log.info({ intervalSeconds: config.metricsIntervalMs / 1000 }, 'sampling the host and the Skiff containers');
  }
}

/** The Docker Engine's version, or empty when it does not answer in time. */
async function dockerVersion(driver: LazyDockerDriver, log: Logger): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), DOCKER_VERSION_MS)));
    const version = await Promise.race([driver.version(), timeout]);
    return version.Version ?? '';
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not read the Docker Engine version');
    return '';
  } finally {
    clearTimeout(timer);
  }
}

async function shutDown(
  log: Logger,
  parts: { agent: Agent | null; proxy: ProxyManager | null; reports: ReportClient | null; journal: CommandJournal | null; nc: NatsConnection | null },
): Promise<void> {
  const step = async (what: string, ms: number, run: () => Promise<unknown>) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
      if ((await Promise.race([run(), timedOut])) === 'timeout') log.warn({ step: what, ms }, 'shutdown step timed out');
    } catch (err) {
      log.warn({ step: what, err: err instanceof Error ? err.message : String(err) }, 'shutdown step failed');
    } finally {
      clearTimeout(timer);
    }
  };
  if (parts.agent) await step('stop commands', STOP_COMMANDS_MS, () => parts.agent!.stop());
  // The proxy container keeps running: the sites answer while the agent is away.
  if (parts.proxy) await step('stop watching the proxy', STOP_PROXY_WATCH_MS, () => parts.proxy!.stop());
  if (parts.reports) {
    await step('deliver reports', FLUSH_REPORTS_MS, () => parts.reports!.flush(FLUSH_REPORTS_MS));
    parts.reports.close();
  }
  if (parts.journal) await step('close journal', 1_000, () => parts.journal!.close());
  if (parts.nc) await step('close NATS', CLOSE_NATS_MS, () => parts.nc!.drain());
}

main().catch((err: unknown) => {
  pino({ name: 'skiff-agent', ...logRedaction() }).fatal({ err: err instanceof Error ? err.message : String(err) }, 'agent crashed');
  process.exit(1);
});

/** The cluster registry with its password read from its file (SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE) when it names one. */
function clusterRegistry(configured: AgentConfig['clusterRegistry']): ClusterRegistry | undefined {
  if (!configured) return undefined;
  const { passwordFile, ...registry } = configured;
  return passwordFile ? { ...registry, password: readFileSync(passwordFile, 'utf8').trim() } : registry;
}
