import { randomBytes } from 'node:crypto';
import { SecretWatch, freshDatabase } from '@skiff/testing';
import type { Hono } from 'hono';
import pino from 'pino';
import { inject } from 'vitest';
import { type PlatformOptions, buildPlatform } from '../compose-root.js';
import type { BillingConfig } from '../config.js';
import { createLogger } from '../logger.js';

export interface Answer<T = any> {
  status: number;
  body: T;
}

export type Call = (
  operation: string,
  input?: Record<string, unknown>,
  options?: { key?: string | null; method?: string; rawBody?: string; address?: string },
) => Promise<Answer>;

/** Calls `/api/<operation>` in process, as a client would over HTTP. */
export function apiClient(app: Hono, defaultKey: string | null, methodOf: (op: string) => string): Call {
  return async (operation, input = {}, options = {}) => {
    const key = options.key === undefined ? defaultKey : options.key;
    const method = options.method ?? methodOf(operation);
    const headers: Record<string, string> = {};
    if (key) headers['x-api-key'] = key;
    let url = `http://skiff.test/api/${operation}`;
    let body: string | undefined;
    if (method === 'GET') {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(input)) {
        for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
      }
      if ([...q].length) url += `?${q}`;
    } else {
      headers['content-type'] = 'application/json';
      body = options.rawBody ?? JSON.stringify(input);
    }
    // The peer address as @hono/node-server hands it over (env.incoming), for the audit log.
    const res = await app.request(url, { method, headers, body }, { incoming: { socket: { remoteAddress: options.address ?? '127.0.0.1' } } });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

/**
 * A whole control plane on a fresh database: Postgres (a new database on the test cluster)
 * or an in-memory PGlite. First boot has run: `ownerKey` acts as the owner.
 */
export async function startTestPlatform(
  options: {
    database?: 'postgres' | 'pglite';
    publicIp?: string;
    billing?: BillingConfig;
    /** Run the outbox relay against this NATS (e.g. `inject('natsUrl')`); none by default. */
    nats?: PlatformOptions['nats'];
    /** Run the agents' gRPC report server (port 0 picks a free one); none by default. */
    grpc?: PlatformOptions['grpc'];
    /** The agent channel's TLS (agents/tls/channel-tls.ts): the gRPC server serves TLS, join commands carry the CA. */
    tls?: PlatformOptions['tls'];
    localAgentCredential?: string;
    /** Remote agents: heartbeat interval, join addresses, join token lifetime. */
    agents?: PlatformOptions['agents'];
    clock?: () => Date;
    ids?: PlatformOptions['ids'];
    /** Where uploaded archives go and their size limit; a temporary folder and 256 MiB by default. */
    archives?: PlatformOptions['archives'];
    /** Where the platform host's proxy sends the platform's own domain. */
    platformUpstream?: string;
    /** The API's listen address (SKIFF_HOST), for settings.assignDomainServer's warning. */
    listenHost?: string;
    /** A built dashboard folder to serve at `/`; none by default. */
    dashboardDir?: string;
    /** Compose template catalogs (bundled folder, remote URL, fetch limits). */
    templates?: PlatformOptions['templates'];
    /** Ended deployments kept per workload (default 20). */
    keepDeployments?: number;
    /** The control plane's own host ports, refused to the platform host's workloads (none by default). */
    platformPorts?: PlatformOptions['platformPorts'];
    /** The host ports one compose stack may publish (default 100). */
    maxComposePorts?: number;
    /**
     * Which destinations users' git sources and catalogs may reach. Default: private ones
     * allowed (SKIFF_OUTBOUND_ALLOW_PRIVATE=1), since the test git and HTTP servers listen on loopback.
     */
    outbound?: PlatformOptions['outbound'];
    /** How long audit events are kept (default 90 days). */
    auditRetentionMs?: number;
    /** Deadlines and size limit of calls to AI providers. */
    ai?: PlatformOptions['ai'];
    /** Calls to forges' APIs (a resolver of the test's). */
    forges?: PlatformOptions['forges'];
    /** Rollback images kept, and the crash loop callback. */
    rollback?: PlatformOptions['rollback'];
    /** Notification channels: Telegram API base, SMTP CA, the operator's SMTP, timeouts. */
    notifications?: PlatformOptions['notifications'];
    /** Event delivery (senders per channel kind, worker timings) and the event stream's timings. */
    events?: PlatformOptions['events'];
    /** The backup scheduler: not started unless `start: true` (tests call `platform.backups.scheduler.tick()`). */
    backups?: PlatformOptions['backups'];
    /** The platform's secret key (another process opening the same records needs it); random by default. */
    secretKey?: Buffer;
    /** The data directory the platform backup archives (PlatformOptions.dataDir). */
    dataDir?: string;
    /** Told the text of every statement the platform runs. */
    onQuery?: (sql: string) => void;
    /** PostgreSQL connections (10 by default): with 1, every statement runs on the session a test reads `pg_prepared_statements` from. */
    poolSize?: number;
    /** Cleanups, schedules, restart and updates (host-operations.ts); the daily job does not run unless asked. */
    host?: PlatformOptions['host'];
    /** The metrics store's bounds and threshold alerts. */
    metrics?: PlatformOptions['metrics'];
  } = {},
) {
  const kind = options.database ?? 'postgres';
  // The control plane's log, every level, kept for the secret watch (and printed too at TEST_LOG_LEVEL).
  const logs = { text: '' };
  const shown = process.env.TEST_LOG_LEVEL;
  const log = createLogger(
    { level: 'trace' },
    pino.multistream([
      { level: 'trace', stream: { write: (line: string) => void (logs.text += line) } },
      ...(shown && shown !== 'silent' ? [{ level: shown as pino.Level, stream: process.stdout }] : []),
    ]),
  );
  const deploymentLogs = { text: '' };
  const watch = new SecretWatch()
    .source('the control plane log', () => logs.text)
    .source('deployment logs read by the test', () => deploymentLogs.text);
  const fresh = kind === 'postgres' ? await freshDatabase(inject('postgresUrl'), inject('postgresTemplate')) : null;
  const platform = await buildPlatform({
    database: { ...(fresh ? { url: fresh.url, poolSize: options.poolSize } : { pgliteDir: 'memory://' }), onQuery: options.onQuery },
    secretKey: options.secretKey ?? randomBytes(32),
    dataDir: options.dataDir,
    log,
    version: '0.0.0-test',
    validateOutput: true,
    billing: options.billing,
    publicIp: options.publicIp,
    nats: options.nats,
    grpc: options.grpc,
    tls: options.tls,
    localAgentCredential: options.localAgentCredential,
    agents: options.agents,
    clock: options.clock,
    ids: options.ids,
    archives: options.archives,
    platformUpstream: options.platformUpstream,
    listenHost: options.listenHost,
    dashboardDir: options.dashboardDir,
    templates: options.templates,
    keepDeployments: options.keepDeployments,
    platformPorts: options.platformPorts,
    maxComposePorts: options.maxComposePorts,
    outbound: options.outbound ?? { allowPrivate: true },
    auditRetentionMs: options.auditRetentionMs,
    ai: options.ai,
    forges: options.forges,
    rollback: options.rollback,
    notifications: options.notifications,
    backups: { start: false, ...options.backups },
    events: options.events,
    host: { dailyCleanupTickMs: false, ...options.host },
    metrics: options.metrics,
  });
  const boot = await platform.identity.bootstrap({ email: 'owner@test.local', name: 'Owner' });
  if (!boot) throw new Error('bootstrap did not run on a fresh database');
  watch.secret(boot.key);
  const { contractsByName } = await import('@skiff/contracts');
  const methodOf = (op: string) => contractsByName.get(op)?.method ?? 'POST';
  const call = kept(apiClient(platform.app, boot.key, methodOf), deploymentLogs);
  return {
    platform,
    db: platform.database.db,
    /** The Postgres database's URL (none on PGlite), for other processes the test starts. */
    databaseUrl: fresh?.url,
    ownerKey: boot.key,
    organizationId: boot.organizationId,
    call,
    /** The same client acting with another key (or none). */
    as: (key: string | null): Call => kept(apiClient(platform.app, key, methodOf), deploymentLogs),
    /**
     * The secrets this test uses (`t.watch.secret(value)`); `close()` fails when one is in the
     * control plane's log or a deployment log read through `call`/`as`. The e2e stack adds the agent's output.
     */
    watch,
    /** What the control plane logged so far (pino JSON lines, every level). */
    logText: () => logs.text,
    /** A deployment's log as text (kept for the watch). */
    async deploymentLog(deploymentId: string): Promise<string> {
      const answer = await call('deployment.readLogs', { deploymentId });
      if (answer.status !== 200) throw new Error(`readLogs failed: ${JSON.stringify(answer.body)}`);
      return JSON.stringify(answer.body);
    },
    async close() {
      await platform.close();
      await fresh?.drop();
      watch.assertNoLeak();
    },
  };
}

/** Keeps the answers of `deployment.readLogs` for the secret watch. */
function kept(call: Call, into: { text: string }): Call {
  return async (operation, input, options) => {
    const answer = await call(operation, input, options);
    if (operation === 'deployment.readLogs' && answer.status === 200) into.text += JSON.stringify(answer.body) + '\n';
    return answer;
  };
}

export type TestPlatform = Awaited<ReturnType<typeof startTestPlatform>>;

/** Invites someone into the caller's organization and accepts; returns the new member's key. */
export async function addMember(t: TestPlatform, email: string, role: 'admin' | 'member' = 'member', inviterKey?: string) {
  const inviter = inviterKey ? t.as(inviterKey) : t.call;
  const invitation = await inviter('organization.inviteMember', { email, role });
  if (invitation.status !== 200) throw new Error(`invite failed: ${JSON.stringify(invitation.body)}`);
  t.watch.secret(invitation.body.token as string);
  const accepted = await t.as(null)('organization.acceptInvitation', { token: invitation.body.token });
  if (accepted.status !== 200) throw new Error(`accept failed: ${JSON.stringify(accepted.body)}`);
  return { userId: accepted.body.userId as string, key: t.watch.secret(accepted.body.apiKey.key as string) };
}

/** The caller of a new organization of its own (the platform owner's key scoped to it), for tests of what one organization may not reach of another. */
export async function otherOrganization(t: TestPlatform) {
  const org = await t.call('organization.create', { name: `Elsewhere ${Math.random()}` });
  const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.body.organizationId } })).body.key as string;
  return t.as(t.watch.secret(key));
}

export const randomKeyLike = () => `skf_${randomBytes(32).toString('base64url')}`;
