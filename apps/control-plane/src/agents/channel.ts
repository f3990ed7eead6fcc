import { rootCertificates } from 'node:tls';
import { connect as connectNats, credsAuthenticator } from '@nats-io/transport-node';
import type { Db } from '@skiff/db';
import { type CommandSigner, isLoopbackHost } from '@skiff/domain';
import { AgentArtifactsService, CommandStatus } from '@skiff/proto';
import type { Logger } from 'pino';
import type { ServerAgents } from '../services/servers/server-agents.js';
import type { AgentCredentials } from './agent-credentials.js';
import { type ArchiveLocator, artifactHandlers } from './inbound/artifact-server.js';
import type { AgentBundle } from './agent-bundle.js';
import type { DeploymentReports } from './inbound/deployment-reports.js';
import { ReportServer, type ReportServerOptions } from './inbound/report-server.js';
import { natsCredentialIssuer } from './nats-credentials.js';
import { OutboxRelay } from './outbound/outbox-relay.js';
import type { CommandOutbox } from './outbound/outbox.js';

export interface AgentChannelOptions {
  /**
   * NATS with JetStream, which carries commands to agents. Without it no outbox relay runs
   * and deployments stay queued (their commands wait in the outbox).
   */
  nats?: {
    url: string;
    /** The control plane's own NATS credentials (text of a `.creds` file), when NATS runs in operator mode. */
    creds?: string;
    /** The account's signing seed, to give each agent its own narrow NATS credentials when it registers. */
    accountSeed?: string;
    pollMs?: number;
    republishAfterMs?: number;
    backoff?: { minMs: number; maxMs: number };
    /** How long a control request, or a withdrawal from the command stream, waits for NATS and the agent (default 5 s; tests shorten it). */
    controlTimeoutMs?: number;
  };
  /** Ended commands are deleted this long after they ended (`SKIFF_COMMAND_RETENTION_DAYS`, default 7 days); the relay prunes them hourly. */
  commandRetentionMs?: number;
  /** Where the AgentReports gRPC server listens (port 0: any free port); without it none runs. */
  grpc?: { host: string; port: number };
  /**
   * The agent channel's TLS (agents/tls/channel-tls.ts; PEM texts): the gRPC server serves
   * only TLS with `cert`/`key`, and a `tls://` NATS URL is checked against `ca`. Without it the
   * gRPC server may listen on loopback only.
   */
  tls?: { ca: string; cert: string; key: string };
  log: Logger;
}

/** Thrown when the agent channel would listen beyond this machine in clear. */
export class ChannelTlsRequired extends Error {}

/** How often commands past their deadline are ended. */
const OVERDUE_SWEEP_MS = 60_000;

/**
 * The agent channel, started: the outbox relay (with `nats`; it subscribes to the outbox, which
 * wakes it whenever commands were committed), the agents' report and artifact servers (with
 * `grpc`), and the overdue sweep.
 */
export async function startAgentChannel(
  options: AgentChannelOptions,
  parts: {
    db: Db;
    outbox: CommandOutbox;
    reports: DeploymentReports;
    clock: () => Date;
    credentials: AgentCredentials;
    serverAgents: ServerAgents;
    archives: ArchiveLocator;
    signer: CommandSigner;
    crashLoops?: ReportServerOptions['crashLoops'];
    /** The agent program offered for updates (settings.updateServer). */
    agentBundle?: Pick<AgentBundle, 'current'>;
    metrics?: ReportServerOptions['metrics'];
  },
) {
  const { nats, grpc, tls } = options;
  if (grpc && !tls && !isLoopbackHost(grpc.host)) {
    throw new ChannelTlsRequired(
      `SKIFF_GRPC_HOST is ${grpc.host}, beyond loopback: agents' gRPC may listen there only with TLS (the CA in <data dir>/tls/); use 127.0.0.1, or let the control plane make its CA`,
    );
  }
  const natsTls = nats && tls && /^tls:\/\//i.test(nats.url.trim()) ? { tls: { ca: [tls.ca, ...rootCertificates].join('\n') } } : {};
  const relay = nats
    ? new OutboxRelay({
        db: parts.db,
        outbox: parts.outbox,
        signer: parts.signer,
        clock: parts.clock,
        log: options.log.child({ component: 'outbox-relay' }),
        pollMs: nats.pollMs,
        republishAfterMs: nats.republishAfterMs,
        backoff: nats.backoff,
        commandRetentionMs: options.commandRetentionMs,
        // A command NATS will never take ends as its agent's rejection would, through its kind.
        endUnpublishable: async (c, reason) => {
          await parts.reports.applyCommandResult(c.serverId, {
            commandId: c.id,
            status: CommandStatus.COMMAND_STATUS_REJECTED,
            reason,
            finishedAt: undefined,
          });
        },
        connect: () =>
          connectNats({
            servers: nats.url,
            name: 'skiff-control-plane',
            timeout: 2000,
            maxReconnectAttempts: -1,
            reconnectTimeWait: 1000,
            ...natsTls,
            ...(nats.creds ? { authenticator: credsAuthenticator(new TextEncoder().encode(nats.creds)) } : {}),
          }),
      })
    : undefined;
  let reportServer: ReportServer | undefined;
  let grpcPort: number | undefined;
  if (grpc) {
    await parts.credentials.reload();
    reportServer = new ReportServer({
      reports: parts.reports,
      credentials: parts.credentials,
      agents: parts.serverAgents,
      natsCredentials: natsCredentialIssuer(nats?.accountSeed ?? null) ?? undefined,
      crashLoops: parts.crashLoops,
      metrics: parts.metrics,
      clock: parts.clock,
      log: options.log.child({ component: 'agent-reports' }),
    });
    reportServer.addService(AgentArtifactsService, (authenticate) =>
      artifactHandlers({ archives: parts.archives, bundle: parts.agentBundle, log: options.log.child({ component: 'agent-artifacts' }) }, authenticate),
    );
    grpcPort = await reportServer.listen(grpc.host, grpc.port, tls);
  }
  relay?.start();
  const sweep = () =>
    parts.reports.expireOverdue().catch((err: unknown) => options.log.error({ err }, 'could not end overdue commands'));
  const sweeper = nats || grpc ? setInterval(sweep, OVERDUE_SWEEP_MS) : undefined;
  sweeper?.unref();
  return {
    relay,
    grpcPort,
    async close() {
      clearInterval(sweeper);
      await relay?.stop();
      await reportServer?.close();
    },
  };
}
