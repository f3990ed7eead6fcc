// Composition root of the Skiff agent. This version is a skeleton: it reads and checks its
// configuration, says so, and waits for SIGTERM. It opens no connections; the command
// consumer (NATS), the report client (gRPC) and the Docker driver arrive in later versions.
import { pino } from 'pino';
import { ConfigError, describeConfig, readConfig, type AgentConfig } from './config.js';

function main(): void {
  const bootLog = pino({ name: 'skiff-agent' });
  let config: AgentConfig;
  try {
    config = readConfig(process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    bootLog.fatal({ issues: err.issues }, 'invalid configuration');
    process.exit(1);
  }

  const log = bootLog.child({ serverId: config.serverId }, { level: config.logLevel });
  // Nothing else holds the event loop open yet. Handlers go in before the start line, so a
  // supervisor that signals as soon as it sees that line always gets a clean stop.
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1);
  const stop = (signal: NodeJS.Signals): void => {
    clearInterval(keepAlive);
    log.info({ signal }, 'agent stopped');
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  log.info(
    { config: describeConfig(config) },
    'agent skeleton started: no connections are opened, commands arrive in a later version',
  );
}

main();
