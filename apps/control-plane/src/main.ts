import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCommandSigningKey } from './agents/command-signing-key.js';
import { loadLocalAgentCredential } from './agents/local-agent-credential.js';
import { channelTlsNames, ensureChannelTls } from './agents/tls/channel-tls.js';
import { buildPlatform } from './compose-root.js';
import { readConfig } from './config.js';
import { listen } from './http/serve.js';
import { createLogger } from './logger.js';
import { loadSecretKey } from './secret-key.js';
import { VERSION } from './version.js';

const config = readConfig(process.env, VERSION);
const log = createLogger({ level: config.logLevel, base: { service: 'control-plane' } });

mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
// The agent channel's CA and server certificate (tools/up made them already, before NATS).
const tls = ensureChannelTls(join(config.dataDir, 'tls'), channelTlsNames(process.env));
log.info({ ca: tls.files.ca, names: tls.names, issued: tls.issued }, 'agent channel TLS ready');
const platform = await buildPlatform({
  database: { url: config.databaseUrl, pgliteDir: join(config.dataDir, 'db') },
  secretKey: loadSecretKey(config.dataDir, config.secretKey),
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
  templates: { url: config.templatesUrl },
  keepDeployments: config.retention.keepDeployments,
  outbound: config.outbound,
  notifications: {
    telegramApiUrl: config.notifications.telegramApiUrl,
    smtpCa: config.notifications.smtpCaFile ? readFileSync(config.notifications.smtpCaFile, 'utf8') : undefined,
    platformSmtp: config.notifications.platformSmtp,
  },
  commandRetentionMs: config.retention.commandRetentionDays * 24 * 3600_000,
  auditRetentionMs: config.retention.auditRetentionDays * 24 * 3600_000,
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
} else if (existsSync(keyFile)) {
  process.stdout.write(`The first API key is in ${keyFile}\n`);
}

const server = listen(platform.app, { port: config.port, hostname: config.host, log }, (port) => {
  log.info({ url: `http://${config.host}:${port}` }, 'control plane listening');
  process.stdout.write(`Skiff API: http://${config.host}:${port}/api\n`);
});

const shutdown = () => {
  log.info('shutting down');
  server.close();
  void platform.close().finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
