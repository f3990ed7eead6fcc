import { type DatabaseHandle, migrateToLatest, openDatabase } from '@skiff/db';
import { CommandSigner, LOCAL_SERVER_ID } from '@skiff/domain';
import { type OutboundPolicy, PUBLIC_ONLY } from '@skiff/outbound';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCredentials } from './agents/agent-credentials.js';
import { type AgentChannelOptions, startAgentChannel } from './agents/channel.js';
import { DeploymentReports } from './agents/inbound/deployment-reports.js';
import { type AgentControl, ControlClient, NoAgentControl } from './agents/outbound/control-client.js';
import { CommandOutbox } from './agents/outbound/outbox.js';
import { type CommandStream, JetStreamCommands, NO_COMMAND_STREAM } from './agents/outbound/command-withdrawal.js';
import type { OutboxRelay } from './agents/outbound/outbox-relay.js';
import { createApp } from './app.js';
import type { BillingConfig } from './config.js';
import { SecretBox } from './crypto/secret-box.js';
import { PrincipalCache } from './http/authenticate.js';
import type { AllHandlers } from './http/context.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { type IdGenerator, randomIds } from './ids.js';
import { aiHandlers } from './routers/ai.js';
import { applicationHandlers } from './routers/application.js';
import { backupHandlers, userBackupHandlers } from './routers/backup.js';
import { billingHandlers } from './routers/billing.js';
import { cacheHandlers } from './routers/cache.js';
import { databaseServices } from './database-wiring.js';
import { certificatesHandlers } from './routers/certificates.js';
import { composeHandlers, composeTemplateHandlers } from './routers/compose.js';
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
import { AuditLog } from './services/audit/index.js';
import { AiService, BillingAllowances, BillingService, PlatformSettingsService } from './services/settings/index.js';
import { AiAssistant, DEFAULT_AI_LIMITS, OpenAiClient, type OpenAiClientOptions } from './services/ai/index.js';
import { ApplicationService, PreviewService } from './services/applications/index.js';
import { BackupService, DestinationService } from './services/backups/index.js';
import { CacheLifecycle, CacheService } from './services/caches/index.js';
import { CertificateService, DomainService, PROXY_REQUEST_TIMEOUT_MS, ProxyConfig, ProxyRequests, ProxySettingsService, SecurityService } from './services/domains/index.js';
import { bundledCatalogDir, ComposeDeployments, ComposeFiles, ComposeService, ComposeTemplateService, loadBundledCatalog, type RemoteCatalogLimits } from './services/compose/index.js';
import { CommandService, DeploymentControl, DeploymentService, DropArchiveService, WorkloadLifecycle } from './services/deployments/index.js';
import { ServiceAccess, type ServiceDeps, type WorkloadRemovals } from './services/shared/index.js';
import { GitProviderService } from './services/forges/index.js';
import { ApiKeyService, IdentityService, InvitationMailer, KeyUsage, MetricsTokenService, OrganizationService, type PlatformSmtp } from './services/identity/index.js';
import { type ChannelOptions, channelSenders, ChannelTests, NotificationService, smtpLimits } from './services/notifications/index.js';
import { type EventOptions, buildEvents } from './services/events/index.js';
import { ProjectService } from './services/projects/index.js';
import { agentEndpoints, ServerAgents, ServerService, SshKeyService } from './services/servers/index.js';

export interface PlatformOptions {
  database: { url?: string; pgliteDir?: string; onQuery?: (sql: string) => void };
  secretKey: Buffer;
  log: Logger;
  version: string;
  ids?: IdGenerator;
  clock?: () => Date;
  validateOutput?: boolean;
  /** Products, default server limit, payment provider and its webhook secret (`readBillingConfig`); none and unlimited by default. */
  billing?: BillingConfig;
  /** The platform host's public IP address (`SKIFF_PUBLIC_IP`), for generated and validated domains. */
  publicIp?: string;
  /**
   * NATS with JetStream, which carries commands to agents. Without it no outbox relay runs
   * and deployments stay queued (their commands wait in the outbox).
   */
  nats?: AgentChannelOptions['nats'];
  /** Where the AgentReports gRPC server listens (port 0: any free port); without it none runs. */
  grpc?: AgentChannelOptions['grpc'];
  /** The agent channel's CA and server certificate (agents/tls/channel-tls.ts); join commands carry the CA. */
  tls?: AgentChannelOptions['tls'];
  /** Ended deployments kept per workload (`SKIFF_KEEP_DEPLOYMENTS`, default 20): deployment-retention.ts. */
  keepDeployments?: number;
  /** How long ended commands are kept (`SKIFF_COMMAND_RETENTION_DAYS`, default 7 days): the relay prunes them. */
  commandRetentionMs?: AgentChannelOptions['commandRetentionMs'];
  /** How long audit events are kept (`SKIFF_AUDIT_RETENTION_DAYS`, default 90 days); pruned hourly in the background of writes. */
  auditRetentionMs?: number;
  /** The credential of the platform host's own agent (server id LOCAL_SERVER_ID). */
  localAgentCredential?: string;
  /**
   * The key that signs commands and control requests (`<dataDir>/command-signing.key`,
   * agents/command-signing-key.ts); without it a new one for this run (tests).
   */
  commandSigner?: CommandSigner;
  /**
   * Uploaded archives of `drop` applications: kept in `dir` (`<dataDir>/archives`), at most
   * `maxBytes` each (`SKIFF_MAX_ARCHIVE_BYTES`, default 256 MiB). Without `dir`, a temporary
   * folder removed by close() (tests).
   */
  archives?: { dir?: string; maxBytes?: number };
  /**
   * Remote servers' agents: seconds between heartbeats (default 15; offline after three
   * missed), and the addresses put in join commands (`SKIFF_AGENT_GRPC_ADDRESS`,
   * `SKIFF_AGENT_NATS_URL`; default: the gRPC listen address and `nats.url`).
   */
  agents?: { heartbeatIntervalSeconds?: number; grpcAddress?: string; natsUrl?: string; joinTokenTtlMs?: number };
  /**
   * Where the platform host's proxy sends the platform's own domain (`host:port`,
   * `SKIFF_PLATFORM_UPSTREAM`); default `host.docker.internal:3000`.
   */
  platformUpstream?: string;
  /**
   * The address the HTTP API listens on (`SKIFF_HOST`): settings.assignDomainServer warns when
   * it is loopback only, since the proxy container cannot reach the control plane there.
   */
  listenHost?: string;
  /**
   * Compose templates: the bundled catalog's folder (default: apps/control-plane/templates),
   * the operator's catalog URL (`SKIFF_TEMPLATES_URL`) and the limits of remote fetches.
   */
  templates?: { dir?: string; url?: string; limits?: Partial<RemoteCatalogLimits> };
  /**
   * Where the control plane pins the SSH host keys of git servers it fetches compose files from
   * (`<dataDir>/known_hosts`); without it each fetch accepts the host anew (tests).
   */
  gitKnownHostsFile?: string;
  /**
   * Which destinations the platform connects to for users (git clones here and on agents,
   * caller-named template catalogs): `SKIFF_OUTBOUND_ALLOW_PRIVATE`; default public only.
   */
  outbound?: OutboundPolicy;
  /** Deadlines and size limit of the calls to AI providers (tests shorten them); defaults DEFAULT_AI_LIMITS. */
  ai?: Partial<Omit<OpenAiClientOptions, 'policy'>>;
  /**
   * Notification channels: the Telegram Bot API's base (`SKIFF_TELEGRAM_API_URL`), extra SMTP
   * CAs (`SKIFF_SMTP_CA_FILE`), the operator's SMTP for invitations (`SKIFF_SMTP_URL`,
   * `SKIFF_SMTP_FROM`), and timeouts (tests).
   */
  notifications?: Omit<ChannelOptions, 'policy'> & { platformSmtp?: PlatformSmtp };
  events?: EventOptions;
}

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
  const deps: ServiceDeps = {
    db: database.db,
    ids: options.ids ?? randomIds,
    clock: options.clock ?? (() => new Date()),
    secrets: new SecretBox(options.secretKey),
    onAccessChange: () => principals?.clear(),
    keepDeployments: options.keepDeployments,
    outbound: options.outbound ?? PUBLIC_ONLY,
  };
  const identity = new IdentityService(deps);
  const outbox = new CommandOutbox(deps.secrets);
  const signer = options.commandSigner ?? CommandSigner.generate();
  let relay: OutboxRelay | undefined;
  // Control requests (cancels, queue cleaning, proxy settings) go to agents as NATS requests over the relay's connection.
  const controlClient = (timeoutMs?: number): AgentControl =>
    options.nats
      ? new ControlClient({ connection: () => (relay ? relay.connection() : Promise.reject(new Error('the agent channel is not started'))), signer, timeoutMs })
      : new NoAgentControl();
  const agentControl = controlClient();
  // Work an offline agent never received is withdrawn from the command stream (command-withdrawal.ts).
  const commandStream: CommandStream = options.nats
    ? new JetStreamCommands(() => (relay ? relay.connection() : Promise.reject(new Error('the agent channel is not started'))))
    : NO_COMMAND_STREAM;
  // Every change of a server's domains, basic-auth users, certificates or the platform's own
  // domain queues its whole proxy configuration.
  const proxy = new ProxyConfig(deps, outbox, {
    platformUpstream: options.platformUpstream,
    agents: new ProxyRequests(agentControl),
  });
  // Bound once the workload lifecycles exist (they need the services built from these two).
  let lifecycleRefs: Pick<WorkloadRemovals, 'queueRemovals'>[] = [];
  let sweepArchives: () => Promise<number> = async () => 0;
  const workloads: WorkloadRemovals = {
    queueRemovals: async (tx, environmentIds, removal) => {
      const queued = [];
      for (const lifecycle of lifecycleRefs) queued.push(...(await lifecycle.queueRemovals(tx, environmentIds, removal)));
      return queued;
    },
    removeRoutes: (tx, owner, remove, field) => proxy.removing(tx, owner, remove, field),
    notify: () => outbox.notify(),
    // The records are gone already: a file left by a failure goes with the next sweep.
    removeArchiveFiles: () => removeArchiveFiles(),
  };
  const removeArchiveFiles = () =>
    sweepArchives().then(
      () => undefined,
      (err: unknown) => options.log.error({ err }, 'could not remove the archive files of removed applications'),
    );
  const organizations = new OrganizationService(deps, identity, workloads);
  const projects = new ProjectService(deps, identity, workloads);
  const metricsTokens = new MetricsTokenService(deps);
  const access = new ServiceAccess(deps.db);
  const applications = new ApplicationService(deps, access, projects, identity);
  const domains = new DomainService(deps, access, proxy, { publicIp: options.publicIp });
  const securityEntries = new SecurityService(deps, access, proxy);
  const certificates = new CertificateService(deps, access, proxy);
  const previews = new PreviewService(deps, access, domains, proxy);
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
  const destinations = new DestinationService(deps);
  const backups = new BackupService(deps, access, destinations);
  const ai = new AiService(deps);
  const aiClient = new OpenAiClient({ policy: deps.outbound ?? PUBLIC_ONLY, ...DEFAULT_AI_LIMITS, ...options.ai });
  const aiAssistant = new AiAssistant(deps, access, projects, ai, composeTemplates, aiClient, options.log.child({ component: 'ai' }));
  const gitProviders = new GitProviderService(deps, identity);
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
  const proxySettings = new ProxySettingsService(deps.db, new ProxyRequests(controlClient(PROXY_REQUEST_TIMEOUT_MS)));
  const billing = new BillingService(deps, billingConfig, servers);
  const deployments = new DeploymentService(deps, access, outbox);
  const lifecycle = new WorkloadLifecycle(deps, access, outbox, proxy, 'application', applications.record, commandStream, { removeFiles: removeArchiveFiles });
  const composeLifecycle = new WorkloadLifecycle(deps, access, outbox, proxy, 'compose', composeStacks.record, commandStream);
  const cacheLifecycle = new CacheLifecycle(deps, access, outbox, caches, commandStream);
  const databases = databaseServices({ deps, access, projects, identity, outbox, stream: commandStream, publicIp: options.publicIp });
  lifecycleRefs = [lifecycle, composeLifecycle, cacheLifecycle, databases.lifecycle];
  const deploymentControl = new DeploymentControl(deps, access, agentControl, 'application', commandStream);
  const composeControl = new DeploymentControl(deps, access, agentControl, 'compose', commandStream);
  const composeDeployments = new ComposeDeployments(deps, access, outbox);
  const composeFiles = new ComposeFiles(deps, access, composeStacks, { git: { knownHostsFile: options.gitKnownHostsFile } });
  const deploymentReports = new DeploymentReports({ ...deps, proxy, archives: { removeFiles: removeArchiveFiles }, events: events.signal });
  const archivesDir = options.archives?.dir ?? (await mkdtemp(join(tmpdir(), 'skiff-archives-')));
  const drops = new DropArchiveService(deps, access, deployments, { dir: archivesDir, log: options.log.child({ component: 'drop-archives' }) });
  sweepArchives = () => drops.sweep();
  await drops.clearIncoming();
  drops.sweep().catch((err: unknown) => options.log.error({ err }, 'could not remove stale archive files'));
  const apiKeys = new ApiKeyService(deps, identity);
  const keyUsage = new KeyUsage(deps, options.log.child({ component: 'api-keys' }));
  principals = new PrincipalCache((hash) => identity.principalByKeyHash(hash), undefined, () => deps.clock().getTime(), (p) =>
    keyUsage.seen(p.apiKeyId),
  );
  const audit = new AuditLog(deps, { retentionMs: options.auditRetentionMs, log: options.log.child({ component: 'audit' }) });

  let openApi: Record<string, unknown> | undefined;
  const openApiDocument = () => (openApi ??= buildOpenApiDocument(options.version));

  const handlers: AllHandlers = {
    project: projectHandlers(projects),
    environment: environmentHandlers(projects),
    organization: organizationHandlers(organizations),
    user: { ...userHandlers(identity, organizations, metricsTokens, apiKeys, invitationMail), ...userBackupHandlers(backups) },
    audit: auditHandlers(audit),
    notification: notificationHandlers(events.service, notifications, channelTests),
    destination: destinationHandlers(destinations),
    backup: backupHandlers(backups),
    application: applicationHandlers(applications, deployments, lifecycle, drops, deploymentControl),
    deployment: deploymentHandlers(deployments),
    command: commandHandlers(new CommandService(deps, access)),
    domain: domainHandlers(domains),
    security: securityHandlers(securityEntries),
    certificates: certificatesHandlers(certificates),
    previewDeployment: previewDeploymentHandlers(previews),
    compose: {
      ...composeHandlers(composeStacks, composeDeployments, composeLifecycle, composeControl, composeFiles),
      ...composeTemplateHandlers(composeTemplates),
    },
    cache: cacheHandlers(caches, cacheLifecycle),
    ...databases.handlers,
    ai: aiHandlers(ai, aiAssistant),
    forgeA: forgeAHandlers(gitProviders),
    forgeB: forgeBHandlers(gitProviders),
    forgeC: forgeCHandlers(gitProviders),
    forgeD: forgeDHandlers(gitProviders),
    gitProvider: gitProviderHandlers(gitProviders),
    server: serverHandlers(servers),
    sshKey: sshKeyHandlers(sshKeys),
    billing: billingHandlers(billing),
    settings: settingsHandlers({ version: options.version, openApiDocument }, platformSettings, proxySettings),
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
    webhooks: { billing: (rawBody, signature) => billing.receiveWebhook(rawBody, signature) },
    uploads: { dir: drops.incomingDir, maxBytes: options.archives?.maxBytes ?? DEFAULT_MAX_ARCHIVE_BYTES },
    eventStream: events.stream,
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
  }).catch(
    async (err) => {
      await database.close();
      if (!options.archives?.dir) await rm(archivesDir, { recursive: true, force: true });
      throw err;
    },
  );
  relay = agents.relay;
  grpcPort = agents.grpcPort;
  if (options.events?.start !== false) events.worker.start();

  const close = async () => {
    await events.worker.stop();
    await agents.close();
    await audit.settled();
    await database.close();
    if (!options.archives?.dir) await rm(archivesDir, { recursive: true, force: true });
  };
  return {
    app,
    database,
    identity,
    organizations,
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
    events,
    close,
  };
}

export type Platform = Awaited<ReturnType<typeof buildPlatform>>;

/** The largest archive `application.dropDeployment` takes by default (SKIFF_MAX_ARCHIVE_BYTES). */
export const DEFAULT_MAX_ARCHIVE_BYTES = 256 * 1024 * 1024;
