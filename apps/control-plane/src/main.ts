import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCommandSigningKey } from './agents/command-signing-key.js';
import { loadLocalAgentCredential } from './agents/local-agent-credential.js';
import { channelTlsNames, ensureChannelTls } from './agents/tls/channel-tls.js';
import { buildPlatform } from './compose-root.js';
import { readConfig } from './config.js';
import { listen } from './http/serve.js';
import { createLogger } from './logger.js';
import { reachableHost } from './reachable-host.js';
import { loadSecretKey } from './secret-key.js';
import { platformHostPorts } from './services/shared/published-ports.js';
import { VERSION } from './version.js';
import { RESTART_EXIT_CODE } from '@skiff/domain';

const config = readConfig(process.env, VERSION);
const log = createLogger({ level: config.logLevel, base: { service: 'control-plane' } });

mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
// The agent channel's CA and server certificate (tools/up made them already, before NATS).
const tls = ensureChannelTls(join(config.dataDir, 'tls'), channelTlsNames(process.env));
log.info({ ca: tls.files.ca, names: tls.names, issued: tls.issued }, 'agent channel TLS ready');
const platform = await buildPlatform({
  database: { url: config.databaseUrl, pgliteDir: join(config.dataDir, 'db') },
  secretKey: loadSecretKey(config.dataDir, config.secretKey),
  dataDir: config.dataDir,
  log,
  version: VERSION,
  billing: config.billing,
  publicIp: config.publicIp,
  nats: config.natsUrl
    ? {
        url: config.natsUrl,
        ...(config.natsCredsFile ? { creds: readFileSync(config.natsCredsFile, 'utf8') } : {}),
        ...(config.natsAccountSeedFile ? { accountSeed: readFileSync(config.natsAccountSeedFile, 'utf8').trim() } : {}),
      }
    : undefined,
  grpc: { host: config.grpcHost, port: config.grpcPort },
  tls: { ca: tls.ca, cert: tls.cert, key: tls.key },
  localAgentCredential: loadLocalAgentCredential(config.dataDir),
  commandSigner: loadCommandSigningKey(config.dataDir),
  archives: { dir: join(config.dataDir, 'archives'), maxBytes: config.maxArchiveBytes },
  gitKnownHostsFile: join(config.dataDir, 'known_hosts'),
  agents: config.agents,
  platformUpstream: config.platformUpstream,
  listenHost: config.host,
  dashboardDir: config.dashboardDir,
  templates: { url: config.templatesUrl },
  keepDeployments: config.retention.keepDeployments,
  backups: { limits: config.backupLimits },
  platformPorts: platformHostPorts({ port: config.port, grpcPort: config.grpcPort, natsUrl: config.natsUrl }),
  maxComposePorts: config.maxComposePorts,
  // The crash loop's event (the onCrashLoop callback) is wired with the events issue.
  rollback: { keepImages: config.retention.rollbackImages },
  outbound: config.outbound,
  notifications: {
    telegramApiUrl: config.notifications.telegramApiUrl,
    smtpCa: config.notifications.smtpCaFile ? readFileSync(config.notifications.smtpCaFile, 'utf8') : undefined,
    platformSmtp: config.notifications.platformSmtp,
  },
  logs: config.logs,
  commandRetentionMs: config.retention.commandRetentionDays * 24 * 3600_000,
  auditRetentionMs: config.retention.auditRetentionDays * 24 * 3600_000,
  host: { releaseFeedUrl: config.releaseFeedUrl, agentBundlePath: config.agentBundlePath, restart: () => shutdown(RESTART_EXIT_CODE) },
  events: { worker: { leaseMs: config.eventLeaseSeconds * 1000, retentionMs: config.retention.eventRetentionDays * 24 * 3600_000 } },
  metrics: { maxContainers: config.metrics.maxContainers, thresholdDurationMs: config.metrics.alertSeconds * 1000 },
});
log.info({ database: platform.database.kind }, 'database ready');
log.info({ address: `${config.grpcHost}:${platform.grpcPort}`, tls: true }, 'agent reports (gRPC) listening');
if (!config.natsUrl) log.warn('SKIFF_NATS_URL is not set: deployments stay queued until it is');

const keyFile = join(config.dataDir, 'initial-api-key');
const first = await platform.identity.bootstrap({ email: config.ownerEmail, name: config.ownerName });
if (first) {
  writeFileSync(keyFile, first.key + '\n', { mode: 0o600 });
  // Printed once, on purpose: the operator needs it and it exists nowhere else in clear.
  process.stdout.write(
    `\nFirst boot: created the owner ${config.ownerEmail} and the organization "Default".\n` +
      `API key (shown once; also in ${keyFile}, mode 0600):\n\n  ${first.key}\n\n`,
  );
} else {
  if (existsSync(keyFile)) process.stdout.write(`The first API key is in ${keyFile}\n`);
  // Not the first boot: the platform restarted (one platformRestart event per organization).
  await platform.events.service.platformRestarted(VERSION).catch((err: unknown) => log.error({ err }, 'could not record the platformRestart event'));
}
await platform.hostOps.started(first !== null);

const server = listen(platform.app, { port: config.port, hostname: config.host, log }, (port) => {
  log.info({ url: `http://${config.host}:${port}` }, 'control plane listening');
  const origin = `http://${reachableHost(config.host)}:${port}`;
  process.stdout.write(`Skiff API: ${origin}/api\n`);
  if (existsSync(join(config.dashboardDir, 'index.html'))) process.stdout.write(`Dashboard: ${origin}/\n`);
});

// Requests in flight finish before the platform closes (queued commands wait in the outbox);
// RESTART_EXIT_CODE (settings.reloadServer) asks tools/up to start the control plane again.
let stopping = false;
function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  log.info({ restart: code === RESTART_EXIT_CODE }, 'shutting down');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const inFlight = Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
  void inFlight.then(() => platform.close()).finally(() => process.exit(code));
}
process.on('SIGTERM', () => shutdown());
process.on('SIGINT', () => shutdown());
