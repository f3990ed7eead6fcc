import { type DatabaseHandle, migrateToLatest, openDatabase } from '@skiff/db';
import { CommandSigner, LOCAL_SERVER_ID } from '@skiff/domain';
import { PUBLIC_ONLY } from '@skiff/outbound';
import { sql } from 'kysely';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCredentials } from './agents/agent-credentials.js';
import { startAgentChannel } from './agents/channel.js';
import { DeploymentReports } from './agents/inbound/deployment-reports.js';
import { type AgentControl, ControlClient, NoAgentControl } from './agents/outbound/control-client.js';
import { CommandOutbox } from './agents/outbound/outbox.js';
import { type CommandStream, JetStreamCommands, NO_COMMAND_STREAM } from './agents/outbound/command-withdrawal.js';
import type { OutboxRelay } from './agents/outbound/outbox-relay.js';
import { createApp } from './app.js';
import type { PlatformOptions } from './platform-options.js';
import { SecretBox } from './crypto/secret-box.js';
import { PrincipalCache } from './http/authenticate.js';
import type { AllHandlers } from './http/context.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { randomIds } from './ids.js';
import { aiHandlers } from './routers/ai.js';
import { applicationHandlers } from './routers/application.js';
import { backupHandlers, userBackupHandlers } from './routers/backup.js';
import { volumeBackupHandlers } from './routers/volumeBackup.js';
import { billingHandlers } from './routers/billing.js';
import { cacheHandlers } from './routers/cache.js';
import { certificatesHandlers } from './routers/certificates.js';
import { clusterHandlers } from './routers/cluster.js';
import { settingsMetricsHandlers, userMetricsHandlers } from './routers/metrics.js';
import { MetricsRetention, MetricsService } from './services/metrics/index.js';
import { composeHandlers, composeTemplateHandlers, composeWebhookHandlers } from './routers/compose.js';
import { deploymentHandlers } from './routers/deployment.js';
import { commandHandlers } from './routers/command.js';
import { destinationHandlers } from './routers/destination.js';
import { domainHandlers } from './routers/domain.js';
import { environmentHandlers } from './routers/environment.js';
import { forgeAHandlers } from './routers/forgeA.js';
import { forgeBHandlers } from './routers/forgeB.js';
import { forgeCHandlers } from './routers/forgeC.js';
import { forgeDHandlers } from './routers/forgeD.js';
import { gitProviderHandlers } from './routers/gitProvider.js';
import { notificationHandlers } from './routers/notification.js';
import { organizationHandlers } from './routers/organization.js';
import { previewDeploymentHandlers } from './routers/previewDeployment.js';
import { projectHandlers } from './routers/project.js';
import { securityHandlers } from './routers/security.js';
import { serverHandlers } from './routers/server.js';
import { settingsHandlers } from './routers/settings.js';
import { sshKeyHandlers } from './routers/sshKey.js';
import { userHandlers } from './routers/user.js';
import { auditHandlers } from './routers/audit.js';
import { mountsHandlers } from './routers/mounts.js';
import { databaseServices } from './database-wiring.js';
import { ApplicationDeletion, MountService } from './services/mounts/index.js';
import { AuditLog } from './services/audit/index.js';
import { AiService, BillingAllowances, BillingService, PlatformSettingsService } from './services/settings/index.js';
import { AiAssistant, DEFAULT_AI_LIMITS, OpenAiClient } from './services/ai/index.js';
import { ApplicationService, PreviewService } from './services/applications/index.js';
import { buildBackups } from './services/backups/wiring.js';
import { CacheLifecycle, CacheService } from './services/caches/index.js';
import { CertificateService, DomainService, PROXY_REQUEST_TIMEOUT_MS, ProxyConfig, ProxyRequests, ProxySettingsService, SecurityService } from './services/domains/index.js';
import { bundledCatalogDir, ComposeDeployments, ComposeFiles, ComposeService, ComposeTemplateService, loadBundledCatalog } from './services/compose/index.js';
import { CommandService, CrashLoops, DeploymentControl, DeploymentService, DropArchiveService, WorkloadLifecycle } from './services/deployments/index.js';
import { ServiceAccess, type ServiceDeps } from './services/shared/index.js';
import { lateWorkloadRemovals } from './services/shared/workload-removals.js';
import { buildForges } from './services/forges/index.js';
import { AccessChanges, accessSignals, ApiKeyService, IdentityService, InvitationMailer, KeyUsage, MetricsTokenService, OrganizationService } from './services/identity/index.js';
import { type ChannelOptions, channelSenders, ChannelTests, NotificationService, smtpLimits } from './services/notifications/index.js';
import { buildEvents, recordCrashLoop } from './services/events/index.js';
import { buildHostOperations } from './host-operations.js';
import { buildContainers } from './containers-root.js';
import { ProjectService } from './services/projects/index.js';
import { buildWebhooks } from './services/webhooks/index.js';
import { agentEndpoints, CLUSTER_REQUEST_TIMEOUT_MS, ClusterService, NODE_REMOVAL_TIMEOUT_MS, ServerAgents, ServerService, SshKeyService } from './services/servers/index.js';

export type { PlatformOptions };

/** Everything the control plane is made of, wired together; used by main.ts and the tests. */
export async function buildPlatform(options: PlatformOptions) {
  // Read and checked first: a broken bundled template stops the start with its reason.
  const bundledTemplates = await loadBundledCatalog(options.templates?.dir ?? bundledCatalogDir());
  const database: DatabaseHandle = await openDatabase({
    ...options.database,
    onIdleConnectionError: (err) => options.log.warn({ err: err.message }, 'database: an idle connection broke; the pool opens another'),
  });
  await migrateToLatest(database.db);

  let principals: PrincipalCache | undefined;
  let accessChanges: AccessChanges | undefined;
  const deps: ServiceDeps = {
    db: database.db,
    ids: options.ids ?? randomIds,
    clock: options.clock ?? (() => new Date()),
    secrets: new SecretBox(options.secretKey),
    onAccessChange: () => accessChanges?.changed(),
    keepDeployments: options.keepDeployments,
    rollbackImages: options.rollback?.keepImages,
    outbound: options.outbound ?? PUBLIC_ONLY,
    platformPorts: options.platformPorts,
    maxComposePorts: options.maxComposePorts,
  };
  const identity = new IdentityService(deps);
  const outbox = new CommandOutbox(deps.secrets);
  const signer = options.commandSigner ?? CommandSigner.generate();
  let relay: OutboxRelay | undefined;
  // Control requests (cancels, queue cleaning, proxy settings) go to agents as NATS requests over the relay's connection.
  const natsConnection = () => (relay ? relay.connection() : Promise.reject(new Error('the agent channel is not started')));
  const controlClient = (timeoutMs = options.nats?.controlTimeoutMs): AgentControl =>
    options.nats ? new ControlClient({ connection: natsConnection, signer, timeoutMs }) : new NoAgentControl();
  const agentControl = controlClient();
  // Work an offline agent never received is withdrawn from the command stream (command-withdrawal.ts).
  const commandStream: CommandStream = options.nats
    ? new JetStreamCommands(natsConnection, options.nats.controlTimeoutMs)
    : NO_COMMAND_STREAM;
  // Every change of a server's domains, basic-auth users, certificates or the platform's own
  // domain queues its whole proxy configuration.
  const proxy = new ProxyConfig(deps, outbox, {
    platformUpstream: options.platformUpstream,
    agents: new ProxyRequests(agentControl),
  });
  // Bound once the workload lifecycles and the archive sweep exist.
  const { workloads, removeArchiveFiles, bind: bindRemovals } = lateWorkloadRemovals(proxy, outbox, options.log);
  const organizations = new OrganizationService(deps, identity, workloads);
  const projects = new ProjectService(deps, identity, workloads);
  const metricsTokens = new MetricsTokenService(deps);
  const access = new ServiceAccess(deps.db);
  const applications = new ApplicationService(deps, access, projects, identity);
  const mounts = new MountService(deps, access);
  const domains = new DomainService(deps, access, proxy, { publicIp: options.publicIp });
  const securityEntries = new SecurityService(deps, access, proxy);
  const certificates = new CertificateService(deps, access, proxy);
  const previews = new PreviewService(deps, access, domains, proxy, outbox);
  const composeStacks = new ComposeService(deps, access, projects, identity, proxy);
  const composeTemplates = new ComposeTemplateService(deps, access, projects, composeStacks, domains, proxy, {
    // Called only once everything is built (composeDeployments is declared below).
    deployer: { deploy: (p, composeId) => composeDeployments.deploy(p, { composeId }, 'deploy') },
    bundled: bundledTemplates,
    remoteUrl: options.templates?.url,
    limits: options.templates?.limits,
    log: options.log.child({ component: 'compose-templates' }),
  });
  const caches = new CacheService(deps, access, projects, identity);
  const notifications = new NotificationService(deps);
  const channelOptions: ChannelOptions = { ...options.notifications, policy: deps.outbound ?? PUBLIC_ONLY };
  const senders = channelSenders(channelOptions);
  const channelTests = new ChannelTests(senders, deps.clock);
  const invitationMail = new InvitationMailer(deps, { channels: smtpLimits(channelOptions), platform: options.notifications?.platformSmtp });
  const events = buildEvents(deps, metricsTokens, options.log, { ...options.events, senders: options.events?.senders ?? senders });
  const metrics = new MetricsService(deps, {
    onThreshold: (...alert) => events.service.serverThreshold(...alert),
    ...options.metrics,
    log: options.log.child({ component: 'metrics' }),
  });
  const metricsRetention = new MetricsRetention(metrics, options.log.child({ component: 'metrics' }));
  const backupParts = buildBackups(deps, access, outbox, events.signal, { databaseUrl: options.database.url, dumpEmbedded: database.dumpSql, dataDir: options.dataDir, secretKey: options.secretKey }, options.log, options.backups);
  const { destinations, backups } = backupParts;
  const ai = new AiService(deps);
  const aiClient = new OpenAiClient({ policy: deps.outbound ?? PUBLIC_ONLY, ...DEFAULT_AI_LIMITS, ...options.ai });
  const aiAssistant = new AiAssistant(deps, access, projects, ai, composeTemplates, aiClient, options.log.child({ component: 'ai' }));
  const forges = buildForges(deps, identity, options.forges);
  const gitProviders = forges.providers;
  const agentCredentials: AgentCredentials = new AgentCredentials({
    onLoadError: (err) => options.log.error({ err }, 'could not reload the agents\' credentials'),
    load: () => serverAgents.credentialSource(),
  });
  if (options.localAgentCredential) agentCredentials.add(options.localAgentCredential, LOCAL_SERVER_ID);
  const serverAgents: ServerAgents = new ServerAgents(deps, {
    credentials: agentCredentials,
    heartbeatIntervalSeconds: options.agents?.heartbeatIntervalSeconds ?? 15,
    log: options.log.child({ component: 'server-agents' }),
  });
  // The gRPC port is known once the report server listens (port 0 in tests): read when a token is issued.
  let grpcPort: number | undefined;
  const billingConfig = options.billing ?? { products: [], maxServers: null };
  const servers = new ServerService(deps, new BillingAllowances(billingConfig.maxServers), {
    agents: serverAgents,
    endpoints: agentEndpoints(options, () => grpcPort),
    commandKey: signer.publicKey,
    joinTokenTtlMs: options.agents?.joinTokenTtlMs,
    removeArchiveFiles: () => removeArchiveFiles(),
  });
  const sshKeys = new SshKeyService(deps);
  const platformSettings = new PlatformSettingsService(deps, proxy, {
    publicIp: options.publicIp,
    listenHost: options.listenHost,
    platformUpstream: options.platformUpstream,
  });
  const hostOps = buildHostOperations(deps, { version: options.version, log: options.log, controlClient, hostSettings: platformSettings, agentChannel: Boolean(options.nats) }, {
    onCleanup: (serverId, result, trigger) => events.service.containerCleanup(serverId, result, trigger),
    ...options.host,
  });
  const proxySettings = new ProxySettingsService(deps.db, new ProxyRequests(controlClient(PROXY_REQUEST_TIMEOUT_MS)));
  const billing = new BillingService(deps, billingConfig, servers);
  const deployments = new DeploymentService(deps, access, outbox, forges.reads);
  const containers = buildContainers({ db: deps.db, access, agentControl, connection: natsConnection, deployments, limits: options.logs });
  const lifecycle = new WorkloadLifecycle(deps, access, outbox, proxy, 'application', applications.record, commandStream, { removeFiles: removeArchiveFiles });
  const composeLifecycle = new WorkloadLifecycle(deps, access, outbox, proxy, 'compose', composeStacks.record, commandStream);
  const cacheLifecycle = new CacheLifecycle(deps, access, outbox, caches, commandStream);
  const deploymentControl = new DeploymentControl(deps, access, agentControl, 'application', commandStream);
  const composeControl = new DeploymentControl(deps, access, agentControl, 'compose', commandStream);
  const composeDeployments = new ComposeDeployments(deps, access, outbox, forges.reads);
  const webhooks = buildWebhooks(deps, access, {
    application: (p, input, reserved) => deployments.deploy(p, input, 'deploy', {}, { reserved }),
    compose: (p, input, reserved) => composeDeployments.deploy(p, input, 'deploy', { reserved }),
    preview: (p, id, input) => deployments.deployPreview(p, id, input),
  }, { previews, domains, tokens: forges.tokens }, options.log);
  webhooks.resume().catch((err: unknown) => options.log.error({ err }, 'could not start the deploys a restart left unstarted'));
  const composeFiles = new ComposeFiles(deps, access, composeStacks, { git: { knownHostsFile: options.gitKnownHostsFile }, forges: forges.reads });
  // A result applied may have ended a backup run: its event is recorded here, whoever started it.
  const reportsApplied = { notify: () => (events.signal.notify(), backupParts.runs.notify()) };
  const deploymentReports = new DeploymentReports({ ...deps, proxy, archives: { removeFiles: removeArchiveFiles }, events: reportsApplied });
  const archivesDir = options.archives?.dir ?? (await mkdtemp(join(tmpdir(), 'skiff-archives-')));
  const drops = new DropArchiveService(deps, access, deployments, { dir: archivesDir, log: options.log.child({ component: 'drop-archives' }) });
  const databases = databaseServices({ deps, access, projects, identity, outbox, stream: commandStream, publicIp: options.publicIp });
  bindRemovals({ lifecycles: [lifecycle, composeLifecycle, cacheLifecycle, databases.lifecycle], sweepArchives: () => drops.sweep() });
  await drops.clearIncoming();
  drops.sweep().catch((err: unknown) => options.log.error({ err }, 'could not remove stale archive files'));
  const apiKeys = new ApiKeyService(deps, identity);
  const keyUsage = new KeyUsage(deps, options.log.child({ component: 'api-keys' }));
  principals = new PrincipalCache((hash) => identity.principalByKeyHash(hash), undefined, () => deps.clock().getTime(), (p) =>
    keyUsage.seen(p.apiKeyId),
  );
  accessChanges = new AccessChanges(principals, database.listen, accessSignals(database.db), options.log.child({ component: 'access-changes' }));
  const audit = new AuditLog(deps, { retentionMs: options.auditRetentionMs, log: options.log.child({ component: 'audit' }) });

  let openApi: Record<string, unknown> | undefined;
  const openApiDocument = () => (openApi ??= buildOpenApiDocument(options.version));

  const handlers: AllHandlers = {
    project: projectHandlers(projects),
    environment: environmentHandlers(projects),
    organization: organizationHandlers(organizations),
    user: { ...userHandlers(identity, organizations, metricsTokens, apiKeys, invitationMail), ...userBackupHandlers(backups), ...userMetricsHandlers(metrics) },
    audit: auditHandlers(audit),
    notification: notificationHandlers(events.service, notifications, channelTests),
    destination: destinationHandlers(destinations, backupParts.runner),
    backup: backupHandlers(backups, backupParts.runner, backupParts.restores, backupParts.verifications, backupParts.files),
    volumeBackup: volumeBackupHandlers(backupParts.volumes),
    application: applicationHandlers(applications, deployments, lifecycle, drops, deploymentControl, new ApplicationDeletion(lifecycle, mounts, previews), webhooks.reads),
    mounts: mountsHandlers(mounts),
    deployment: deploymentHandlers(deployments),
    command: commandHandlers(new CommandService(deps, access)),
    domain: domainHandlers(domains),
    security: securityHandlers(securityEntries),
    certificates: certificatesHandlers(certificates),
    previewDeployment: previewDeploymentHandlers(previews),
    compose: {
      ...composeHandlers(composeStacks, composeDeployments, composeLifecycle, composeControl, composeFiles),
      ...composeTemplateHandlers(composeTemplates),
      ...composeWebhookHandlers(webhooks.reads),
    },
    cache: cacheHandlers(caches, cacheLifecycle),
    ...databases.handlers,
    ai: aiHandlers(ai, aiAssistant),
    forgeA: forgeAHandlers(gitProviders, forges.reads),
    forgeB: forgeBHandlers(gitProviders, forges.reads),
    forgeC: forgeCHandlers(gitProviders, forges.reads),
    forgeD: forgeDHandlers(gitProviders, forges.reads),
    gitProvider: gitProviderHandlers(gitProviders),
    server: serverHandlers(servers),
    cluster: clusterHandlers(new ClusterService(deps.db, { reads: controlClient(CLUSTER_REQUEST_TIMEOUT_MS), removals: controlClient(NODE_REMOVAL_TIMEOUT_MS) })),
    sshKey: sshKeyHandlers(sshKeys),
    billing: billingHandlers(billing),
    container: containers.handlers,
    settings: { ...settingsHandlers({ version: options.version, openApiDocument }, platformSettings, proxySettings), ...hostOps.handlers, ...settingsMetricsHandlers(metrics) },
  };

  const app = createApp({
    handlers,
    principals,
    audit,
    log: options.log,
    openApiDocument,
    checkHealth: async () => {
      await sql`select 1`.execute(database.db);
    },
    validateOutput: options.validateOutput,
    webhooks: { billing: (rawBody, signature) => billing.receiveWebhook(rawBody, signature), push: webhooks.receiver },
    logs: containers.logRoutes,
    uploads: { dir: drops.incomingDir, maxBytes: options.archives?.maxBytes ?? DEFAULT_MAX_ARCHIVE_BYTES },
    eventStream: events.stream,
    dashboardDir: options.dashboardDir,
  });

  const agents = await startAgentChannel(options, {
    db: database.db,
    outbox,
    reports: deploymentReports,
    clock: deps.clock,
    credentials: agentCredentials,
    serverAgents,
    archives: drops,
    signer,
    metrics,
    crashLoops: new CrashLoops(deps, outbox, {
      onCrashLoop: options.rollback?.onCrashLoop ?? ((e) => recordCrashLoop(deps.db, e).then(() => events.signal.notify())),
      log: options.log.child({ component: 'crash-loops' }),
    }),
    agentBundle: hostOps.agentBundle,
  }).catch(
    async (err) => {
      await database.close();
      if (!options.archives?.dir) await rm(archivesDir, { recursive: true, force: true });
      throw err;
    },
  );
  relay = agents.relay;
  accessChanges.start();
  grpcPort = agents.grpcPort;
  if (options.events?.start !== false) events.worker.start();
  hostOps.start();
  metricsRetention.start();
  if (backupParts.start) backupParts.scheduler.start();

  const close = async () => {
    await events.worker.stop();
    await hostOps.close();
    await metricsRetention.stop();
    await backupParts.scheduler.stop();
    await agents.close();
    await audit.settled();
    await accessChanges.close();
    await database.close();
    if (!options.archives?.dir) await rm(archivesDir, { recursive: true, force: true });
  };
  return {
    app,
    database,
    identity,
    organizations,
    /** Whether the access listener holds (tests of several control planes wait for it). */
    accessChanges,
    /** The audit log (its prune, for tests). */
    audit,
    projects,
    secrets: deps.secrets,
    /** Uploaded archives of drop applications (where their files are, the sweep). */
    archives: drops,
    grpcPort: agents.grpcPort,
    /** The public key agents verify commands with (SKIFF_COMMAND_KEY). */
    commandKey: signer.publicKey,
    /** What agents report, applied as the gRPC report server applies it (tests report through it). */
    reports: deploymentReports,
    /** Ends the commands past their deadline (done every minute while the agent channel runs). */
    expireOverdueCommands: () => deploymentReports.expireOverdue(),
    /** Starts the webhook deploys left without their command (done at boot). */
    resumeDeferredDeploys: webhooks.resume,
    events,
    /** Cleanups and their daily schedule (tests drive the job's tick). */
    hostOps,
    /** The metrics store and thresholds (tests record and retain through it). */
    metrics,
    backups: backupParts,
    close,
  };
}

export type Platform = Awaited<ReturnType<typeof buildPlatform>>;

/** The largest archive `application.dropDeployment` takes by default (SKIFF_MAX_ARCHIVE_BYTES). */
export const DEFAULT_MAX_ARCHIVE_BYTES = 256 * 1024 * 1024;
