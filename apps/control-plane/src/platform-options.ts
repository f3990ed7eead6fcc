import type { CommandSigner } from '@skiff/domain';
import type { OutboundPolicy } from '@skiff/outbound';
import type { Logger } from 'pino';
import type { AgentChannelOptions } from './agents/channel.js';
import type { BillingConfig } from './config.js';
import type { buildContainers } from './containers-root.js';
import type { HostOperationsOptions } from './host-operations.js';
import type { IdGenerator } from './ids.js';
import type { OpenAiClientOptions } from './services/ai/index.js';
import type { RemoteCatalogLimits } from './services/compose/index.js';
import type { OnCrashLoop } from './services/deployments/index.js';
import type { EventOptions } from './services/events/index.js';
import type { ForgeHttpDeps } from './services/forges/clients/index.js';
import type { PlatformSmtp } from './services/identity/index.js';
import type { MetricsOptions } from './services/metrics/index.js';
import type { ChannelOptions } from './services/notifications/index.js';
import type { BackupOptions } from './services/backups/wiring.js';

/** What the composition root (compose-root.ts) builds the platform from: main.ts reads it from the environment, tests set it. */
export interface PlatformOptions {
  database: { url?: string; pgliteDir?: string; poolSize?: number; onQuery?: (sql: string) => void };
  secretKey: Buffer;
  /** SKIFF_DATA_DIR: the platform backup archives it (without the database's folder); none in most tests. */
  dataDir?: string;
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
  /** The host ports the control plane listens on (published-ports.ts `platformHostPorts`): refused to the platform host's workloads. */
  platformPorts?: ReadonlyMap<string, string>;
  /** The host ports one compose stack may publish (`SKIFF_MAX_COMPOSE_PORTS`, default 100). */
  maxComposePorts?: number;
  /** Rollback images kept (`SKIFF_ROLLBACK_KEEP_IMAGES`, default 3) and the crash loop callback. */
  rollback?: { keepImages?: number; onCrashLoop?: OnCrashLoop };
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
  /** The built web dashboard (apps/dashboard) served at `/`; none: `/` is NOT_FOUND. */
  dashboardDir?: string;
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
  /** Calls to forges' APIs: the resolver and deadline (tests); the policy is `outbound`'s. */
  forges?: Partial<Omit<ForgeHttpDeps, 'policy'>>;
  /**
   * Notification channels: the Telegram Bot API's base (`SKIFF_TELEGRAM_API_URL`), extra SMTP
   * CAs (`SKIFF_SMTP_CA_FILE`), the operator's SMTP for invitations (`SKIFF_SMTP_URL`,
   * `SKIFF_SMTP_FROM`), and timeouts (tests).
   */
  notifications?: Omit<ChannelOptions, 'policy'> & { platformSmtp?: PlatformSmtp };
  events?: EventOptions;
  /** Cleanups, their daily schedule, restart and updates (host-operations.ts). */
  host?: HostOperationsOptions;
  /** Bounds of runtime log streams (SKIFF_LOG_MAX_BYTES, …_LINES_PER_SECOND, …_SECONDS); DEFAULT_LOG_LIMITS. */
  logs?: Parameters<typeof buildContainers>[0]['limits'];
  /** The metrics store's bounds and threshold alerts (services/metrics). */
  metrics?: Omit<MetricsOptions, 'log'>;
  /** The backup scheduler (`start: false`: none in this process). */
  backups?: BackupOptions;
}
