import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { BillingProductConfig } from '@skiff/contracts';
import { outboundUrlProblem } from '@skiff/domain';
import { type OutboundPolicy, readOutboundPolicy } from '@skiff/outbound';
import { z } from 'zod';
import { defaultPlatformUpstream } from './services/domains/index.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** The built web dashboard served at `/` (`SKIFF_DASHBOARD_DIR`, default `dist/dashboard`). */
  dashboardDir: string;
  databaseUrl?: string;
  secretKey?: string;
  ownerEmail: string;
  ownerName: string;
  logLevel: string;
  version: string;
  billing: BillingConfig;
  /** The platform host's public IP address, for generated (sslip.io) and validated domains. */
  publicIp?: string;
  /** `SKIFF_NATS_URL`: NATS with JetStream for agent commands; unset, deployments stay queued. */
  natsUrl?: string;
  /**
   * NATS in operator mode (tools/up sets it up): `SKIFF_NATS_CREDS`, the control plane's own
   * `.creds` file, and `SKIFF_NATS_ACCOUNT_SEED_FILE`, the account seed it signs each agent's
   * narrow credentials with.
   */
  natsCredsFile?: string;
  natsAccountSeedFile?: string;
  /** `SKIFF_GRPC_HOST` / `SKIFF_GRPC_PORT`: where agents report (127.0.0.1:50051 by default). */
  grpcHost: string;
  grpcPort: number;
  /** `SKIFF_MAX_ARCHIVE_BYTES`: the largest archive `application.dropDeployment` takes (256 MiB by default). */
  maxArchiveBytes: number;
  /**
   * Remote servers' agents. `SKIFF_AGENT_GRPC_ADDRESS` (`host:port`) and `SKIFF_AGENT_NATS_URL`:
   * the addresses join commands tell agents to use (default: the gRPC listen address, a
   * wildcard one replaced by SKIFF_PUBLIC_IP or the host name, and SKIFF_NATS_URL);
   * `SKIFF_AGENT_HEARTBEAT_SECONDS`: seconds between heartbeats, default 15 (a server is
   * offline after three missed).
   */
  agents: { grpcAddress?: string; natsUrl?: string; heartbeatIntervalSeconds: number };
  /**
   * `SKIFF_PLATFORM_UPSTREAM` (`host:port`): where the platform host's proxy sends the
   * platform's own domain (settings.assignDomainServer); default `host.docker.internal:<SKIFF_PORT>`
   * (the proxy container reaches the host there; the API must then listen on an address the
   * container reaches, e.g. SKIFF_HOST=0.0.0.0).
   */
  platformUpstream: string;
  /**
   * `SKIFF_TEMPLATES_URL`: a template catalog (meta.json and blueprints/<id>/…) merged over the
   * bundled one; its templates replace bundled ones with the same id. Unset: the bundled one only.
   */
  templatesUrl?: string;
  /**
   * `SKIFF_RELEASE_FEED_URL`: the JSON release feed settings.getUpdateData reads; unset: the
   * default feed (services/host/release-feed.ts, DEFAULT_RELEASE_FEED_URL).
   */
  releaseFeedUrl?: string;
  /** `SKIFF_AGENT_BUNDLE`: the agent program offered to agents by settings.updateServer; default `dist/agent/main.mjs`. */
  agentBundlePath: string;
  /**
   * Retention (issue 13): `SKIFF_KEEP_DEPLOYMENTS`, the ended deployments kept per workload
   * (default 20, at least 1); `SKIFF_COMMAND_RETENTION_DAYS`, the days ended commands are
   * kept (default 7, at least 1); `SKIFF_AUDIT_RETENTION_DAYS`, the days audit events are kept
   * (default 90, at least 1); `SKIFF_EVENT_RETENTION_DAYS`, the days events and their ended
   * deliveries are kept (default 30, at least 1).
   */
  retention: { keepDeployments: number; commandRetentionDays: number; auditRetentionDays: number; eventRetentionDays: number; rollbackImages: number };
  /**
   * `SKIFF_OUTBOUND_ALLOW_PRIVATE` (`1`/`0`, default 0): whether git clones (here and on every
   * agent, carried in the commands) and caller-named template catalogs may reach loopback and
   * private addresses. Link-local and metadata addresses are refused whatever it says.
   */
  outbound: OutboundPolicy;
  /** Notification channels and invitation emails (see readNotificationConfig). */
  notifications: NotificationConfig;
  /**
   * Bounds of each runtime log stream (`GET /api/logs.*`): `SKIFF_LOG_MAX_BYTES` (default
   * 10 MiB), `SKIFF_LOG_MAX_LINES_PER_SECOND` (default 1000; more lines wait),
   * `SKIFF_LOG_MAX_SECONDS` (default 3600).
   */
  logs: { maxBytes: number; maxLinesPerSecond: number; maxDurationMs: number };
  /**
   * The metrics store and alerts: `SKIFF_METRICS_MAX_CONTAINERS`, the containers of one server
   * kept per sampling instant (default 50); `SKIFF_METRICS_ALERT_SECONDS`, how long a value
   * stays past a threshold before it alerts or recovers (default 60).
   */
  metrics: { maxContainers: number; alertSeconds: number };
  /**
   * `SKIFF_EVENT_LEASE_SECONDS` (default 120): how long a control plane holds the event
   * deliveries it claimed; past it, those of a control plane that died are sent again.
   */
  eventLeaseSeconds: number;
  /**
   * `SKIFF_MAX_BACKUPS_PER_ORGANIZATION` (default 100): the backup schedules (database, compose
   * and volume backups) one organization keeps; `SKIFF_MAX_BACKUPS_PER_TARGET` (default 10): those
   * of one database service, compose stack's service or application volume.
   */
  backupLimits: { perOrganization: number; perTarget: number };
  /** `SKIFF_MAX_COMPOSE_PORTS` (default 100): the host ports one compose stack may publish. */
  maxComposePorts: number;
}

export function readConfig(env: NodeJS.ProcessEnv, version: string): Config {
  const port = Number(env.SKIFF_PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SKIFF_PORT is not a port: ${env.SKIFF_PORT}`);
  const grpcPort = Number(env.SKIFF_GRPC_PORT ?? 50051);
  if (!Number.isInteger(grpcPort) || grpcPort < 0 || grpcPort > 65535) throw new Error(`SKIFF_GRPC_PORT is not a port: ${env.SKIFF_GRPC_PORT}`);
  const publicIp = env.SKIFF_PUBLIC_IP?.trim() || undefined;
  const heartbeatText = env.SKIFF_AGENT_HEARTBEAT_SECONDS?.trim() || '15';
  const heartbeatIntervalSeconds = Number(heartbeatText);
  if (!/^\d+$/.test(heartbeatText) || heartbeatIntervalSeconds < 1 || heartbeatIntervalSeconds > 3600) {
    throw new Error(`SKIFF_AGENT_HEARTBEAT_SECONDS is not a whole number from 1 to 3600: ${env.SKIFF_AGENT_HEARTBEAT_SECONDS}`);
  }
  const agentGrpc = env.SKIFF_AGENT_GRPC_ADDRESS?.trim() || undefined;
  if (agentGrpc && /\s/.test(agentGrpc)) throw new Error('SKIFF_AGENT_GRPC_ADDRESS must not contain whitespace');
  const maxArchiveText = env.SKIFF_MAX_ARCHIVE_BYTES?.trim() || String(256 * 1024 * 1024);
  const maxArchiveBytes = Number(maxArchiveText);
  if (!/^\d+$/.test(maxArchiveText) || !Number.isSafeInteger(maxArchiveBytes) || maxArchiveBytes < 1) {
    throw new Error(`SKIFF_MAX_ARCHIVE_BYTES is not a positive whole number of bytes: ${env.SKIFF_MAX_ARCHIVE_BYTES}`);
  }
  if (publicIp && !isIP(publicIp)) throw new Error(`SKIFF_PUBLIC_IP is not an IP address: ${env.SKIFF_PUBLIC_IP}`);
  const platformUpstream = env.SKIFF_PLATFORM_UPSTREAM?.trim() || defaultPlatformUpstream(port);
  if (!/^(?:[A-Za-z0-9][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\]):\d{1,5}$/.test(platformUpstream)) {
    throw new Error(`SKIFF_PLATFORM_UPSTREAM is not host:port: ${env.SKIFF_PLATFORM_UPSTREAM}`);
  }
  const templatesUrl = env.SKIFF_TEMPLATES_URL?.trim() || undefined;
  const templatesProblem = templatesUrl === undefined ? null : outboundUrlProblem(templatesUrl);
  if (templatesProblem) throw new Error(`SKIFF_TEMPLATES_URL ${templatesProblem}: ${templatesUrl}`);
  const releaseFeedUrl = env.SKIFF_RELEASE_FEED_URL?.trim() || undefined;
  const feedProblem = releaseFeedUrl === undefined ? null : outboundUrlProblem(releaseFeedUrl);
  if (feedProblem) throw new Error(`SKIFF_RELEASE_FEED_URL ${feedProblem}: ${releaseFeedUrl}`);
  const retention = {
    keepDeployments: wholeNumber(env, 'SKIFF_KEEP_DEPLOYMENTS', 20, 1, 100_000),
    commandRetentionDays: wholeNumber(env, 'SKIFF_COMMAND_RETENTION_DAYS', 7, 1, 36_500),
    auditRetentionDays: wholeNumber(env, 'SKIFF_AUDIT_RETENTION_DAYS', 90, 1, 36_500),
    eventRetentionDays: wholeNumber(env, 'SKIFF_EVENT_RETENTION_DAYS', 30, 1, 36_500),
    rollbackImages: wholeNumber(env, 'SKIFF_ROLLBACK_KEEP_IMAGES', 3, 1, 100),
  };
  return {
    port,
    host: env.SKIFF_HOST ?? '127.0.0.1',
    dataDir: resolve(env.SKIFF_DATA_DIR ?? '.data'),
    dashboardDir: resolve(env.SKIFF_DASHBOARD_DIR || 'dist/dashboard'),
    databaseUrl: env.DATABASE_URL || undefined,
    secretKey: env.SKIFF_SECRET_KEY || undefined,
    ownerEmail: env.SKIFF_OWNER_EMAIL ?? 'owner@skiff.local',
    ownerName: env.SKIFF_OWNER_NAME ?? 'Owner',
    logLevel: env.LOG_LEVEL ?? 'info',
    version,
    billing: readBillingConfig(env),
    publicIp,
    natsUrl: env.SKIFF_NATS_URL?.trim() || undefined,
    natsCredsFile: env.SKIFF_NATS_CREDS?.trim() || undefined,
    natsAccountSeedFile: env.SKIFF_NATS_ACCOUNT_SEED_FILE?.trim() || undefined,
    grpcHost: env.SKIFF_GRPC_HOST?.trim() || '127.0.0.1',
    grpcPort,
    maxArchiveBytes,
    agents: { grpcAddress: agentGrpc, natsUrl: env.SKIFF_AGENT_NATS_URL?.trim() || undefined, heartbeatIntervalSeconds },
    platformUpstream,
    templatesUrl,
    releaseFeedUrl,
    agentBundlePath: resolve(env.SKIFF_AGENT_BUNDLE?.trim() || 'dist/agent/main.mjs'),
    retention,
    backupLimits: {
      perOrganization: wholeNumber(env, 'SKIFF_MAX_BACKUPS_PER_ORGANIZATION', 100, 1, 100_000),
      perTarget: wholeNumber(env, 'SKIFF_MAX_BACKUPS_PER_TARGET', 10, 1, 10_000),
    },
    outbound: readOutboundPolicy(env.SKIFF_OUTBOUND_ALLOW_PRIVATE),
    notifications: readNotificationConfig(env),
    logs: {
      maxBytes: wholeNumber(env, 'SKIFF_LOG_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 ** 3),
      maxLinesPerSecond: wholeNumber(env, 'SKIFF_LOG_MAX_LINES_PER_SECOND', 1000, 1, 100_000),
      maxDurationMs: wholeNumber(env, 'SKIFF_LOG_MAX_SECONDS', 3600, 1, 86_400) * 1000,
    },
    metrics: {
      maxContainers: wholeNumber(env, 'SKIFF_METRICS_MAX_CONTAINERS', 50, 1, 1000),
      alertSeconds: wholeNumber(env, 'SKIFF_METRICS_ALERT_SECONDS', 60, 0, 86_400),
    },
    eventLeaseSeconds: wholeNumber(env, 'SKIFF_EVENT_LEASE_SECONDS', 120, 1, 86_400),
    maxComposePorts: wholeNumber(env, 'SKIFF_MAX_COMPOSE_PORTS', 100, 1, 65_535),
  };
}

export interface NotificationConfig {
  /** `SKIFF_TELEGRAM_API_URL`: the Telegram Bot API's base URL (default https://api.telegram.org). */
  telegramApiUrl?: string;
  /** `SKIFF_SMTP_CA_FILE`: PEM certificates trusted beside the system's by SMTP connections. */
  smtpCaFile?: string;
  /**
   * `SKIFF_SMTP_URL` (`smtp://user:password@host:587`, STARTTLS required; `smtps://…:465`, TLS)
   * and `SKIFF_SMTP_FROM`: the operator's SMTP, which `user.sendInvitation` uses with
   * `notificationId: "platform"`.
   */
  platformSmtp?: { server: { host: string; port: number; secure: boolean; username?: string; password?: string }; from: string };
}

export function readNotificationConfig(env: NodeJS.ProcessEnv): NotificationConfig {
  const telegramApiUrl = env.SKIFF_TELEGRAM_API_URL?.trim() || undefined;
  const telegramProblem = telegramApiUrl === undefined ? null : outboundUrlProblem(telegramApiUrl);
  if (telegramProblem) throw new Error(`SKIFF_TELEGRAM_API_URL ${telegramProblem}: ${telegramApiUrl}`);
  const smtpCaFile = env.SKIFF_SMTP_CA_FILE?.trim() || undefined;
  const smtpUrl = env.SKIFF_SMTP_URL?.trim() || undefined;
  if (!smtpUrl) return { telegramApiUrl, smtpCaFile };
  // Never echoed: it holds the SMTP password.
  const url = URL.parse(smtpUrl);
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
    throw new Error('SKIFF_SMTP_URL must be smtp://[user:password@]host[:port] or smtps://…');
  }
  const from = env.SKIFF_SMTP_FROM?.trim();
  if (!from || !/^[^\s@<>]+@[^\s@<>]+$/.test(from)) throw new Error('SKIFF_SMTP_FROM must be the sender address when SKIFF_SMTP_URL is set');
  const secure = url.protocol === 'smtps:';
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    telegramApiUrl,
    smtpCaFile,
    platformSmtp: {
      server: {
        host,
        port,
        secure,
        username: url.username ? decodeURIComponent(url.username) : undefined,
        password: url.password ? decodeURIComponent(url.password) : undefined,
      },
      from,
    },
  };
}

/** A whole number from `min` to `max` in env[name], `fallback` when unset or empty. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name]?.trim() || String(fallback);
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new Error(`${name} is not a whole number from ${min} to ${max}: ${env[name]}`);
  return n;
}

/** What billing answers from: the operator's products, the server limit, the payment provider. */
export interface BillingConfig {
  /** `SKIFF_BILLING_PRODUCTS`: a JSON list of products (see `BillingProduct`); none by default. */
  products: z.output<typeof BillingProductConfig>[];
  /**
   * `SKIFF_MAX_SERVERS`: how many servers an organization may register unless its subscription
   * says otherwise (the free default); unlimited (null) by default.
   */
  maxServers: number | null;
  /** `SKIFF_BILLING_API_KEY`: the payment provider's secret key (`sk_…`); none by default. */
  apiKey?: string;
  /** `SKIFF_BILLING_API_URL`: the provider's API (Stripe's shape); `https://api.stripe.com` by default. */
  apiUrl?: string;
  /** `SKIFF_BILLING_WEBHOOK_SECRET`: the signing secret (`whsec_…`) of `POST /webhooks/billing`; without it the route answers NOT_FOUND. */
  webhookSecret?: string;
  /**
   * `SKIFF_BILLING_RETURN_URL`: where the provider sends the user back after a checkout or from
   * the portal; default `https://<the platform's domain>/` (settings.assignDomainServer).
   */
  returnUrl?: string;
}

export const DEFAULT_BILLING_API_URL = 'https://api.stripe.com';

export function readBillingConfig(env: NodeJS.ProcessEnv): BillingConfig {
  let products: BillingConfig['products'] = [];
  const productsText = env.SKIFF_BILLING_PRODUCTS?.trim();
  if (productsText) {
    let json: unknown;
    try {
      json = JSON.parse(productsText);
    } catch {
      throw new Error('SKIFF_BILLING_PRODUCTS is not JSON');
    }
    const parsed = z.array(BillingProductConfig).safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`SKIFF_BILLING_PRODUCTS: ${issue.path.join('.') || 'value'}: ${issue.message}`);
    }
    products = parsed.data;
    const priceIds = products.flatMap((p) => p.prices.map((price) => price.priceId));
    const repeated = priceIds.find((id, i) => priceIds.indexOf(id) !== i);
    if (repeated) throw new Error(`SKIFF_BILLING_PRODUCTS: the price ${repeated} appears twice`);
    for (const [i, product] of products.entries()) {
      for (const interval of ['month', 'year'] as const) {
        if (product.prices.filter((price) => price.interval === interval).length > 1) {
          throw new Error(`SKIFF_BILLING_PRODUCTS: ${i}.prices: more than one ${interval}ly price`);
        }
      }
    }
  }
  const maxText = env.SKIFF_MAX_SERVERS?.trim();
  const maxServers = maxText ? Number(maxText) : null;
  if (maxServers !== null && (!Number.isInteger(maxServers) || maxServers < 0)) {
    throw new Error(`SKIFF_MAX_SERVERS is not a whole number: ${env.SKIFF_MAX_SERVERS}`);
  }
  const apiKey = env.SKIFF_BILLING_API_KEY?.trim() || undefined;
  if (apiKey && /[^\x21-\x7e]/.test(apiKey)) throw new Error('SKIFF_BILLING_API_KEY must be printable ASCII without spaces');
  const apiUrl = env.SKIFF_BILLING_API_URL?.trim() || undefined;
  const apiUrlProblem = apiUrl === undefined ? null : outboundUrlProblem(apiUrl);
  if (apiUrlProblem) throw new Error(`SKIFF_BILLING_API_URL ${apiUrlProblem}: ${apiUrl}`);
  const returnUrl = env.SKIFF_BILLING_RETURN_URL?.trim() || undefined;
  if (returnUrl !== undefined && !/^https?:$/.test(URL.parse(returnUrl)?.protocol ?? '')) {
    throw new Error(`SKIFF_BILLING_RETURN_URL is not an http(s) URL: ${returnUrl}`);
  }
  const webhookSecret = env.SKIFF_BILLING_WEBHOOK_SECRET?.trim() || undefined;
  return {
    products,
    maxServers,
    apiKey,
    ...(apiUrl ? { apiUrl } : {}),
    ...(webhookSecret ? { webhookSecret } : {}),
    ...(returnUrl ? { returnUrl } : {}),
  };
}
