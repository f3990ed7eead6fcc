/** The agent's configuration, read from its environment at the composition root. */
export interface AgentConfig {
  /** This server's id; also a NATS subject token (`agent.<serverId>.cmd`). SKIFF_SERVER_ID. */
  serverId: string;
  /** gRPC target of the control plane's report server (`host:port`, `dns:///host:port`, `unix:///path`). SKIFF_CONTROL_PLANE_GRPC. */
  controlPlaneGrpc: string;
  /** NATS server URLs (`nats://` or `tls://`), from the comma-separated SKIFF_NATS_URL. May carry credentials. */
  natsServers: string[];
  /** SKIFF_LOG_LEVEL, default `info`. */
  logLevel: LogLevel;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Env = Readonly<Record<string, string | undefined>>;

/** Thrown by readConfig with every problem found; the messages name variables, never their values. */
export class ConfigError extends Error {
  constructor(readonly issues: readonly string[]) {
    super(`invalid agent configuration: ${issues.join('; ')}`);
    this.name = 'ConfigError';
  }
}

// Letters, digits, `_` and `-`: no `.`, `*`, `>` or whitespace, which NATS subjects reserve.
const SERVER_ID = /^[A-Za-z0-9_-]{1,128}$/;
const NATS_PROTOCOLS = new Set(['nats:', 'tls:']);

/** Reads and validates the agent's configuration from an environment. Pure: no defaults from the process. */
export function readConfig(env: Env): AgentConfig {
  const issues: string[] = [];
  const required = (name: string): string => {
    const value = env[name]?.trim() ?? '';
    if (value === '') issues.push(`${name} is required`);
    return value;
  };

  const serverId = required('SKIFF_SERVER_ID');
  if (serverId !== '' && !SERVER_ID.test(serverId)) {
    issues.push('SKIFF_SERVER_ID must be 1-128 letters, digits, "_" or "-"');
  }

  const controlPlaneGrpc = required('SKIFF_CONTROL_PLANE_GRPC');
  if (controlPlaneGrpc !== '' && /\s/.test(controlPlaneGrpc)) {
    issues.push('SKIFF_CONTROL_PLANE_GRPC must not contain whitespace');
  }

  const natsUrl = required('SKIFF_NATS_URL');
  const natsServers = natsUrl === '' ? [] : natsUrl.split(',').map((s) => s.trim());
  if (natsServers.some((s) => !isNatsUrl(s))) {
    issues.push('SKIFF_NATS_URL must be a comma-separated list of nats:// or tls:// URLs with a host');
  }

  const logLevel = (env.SKIFF_LOG_LEVEL?.trim() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    issues.push(`SKIFF_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }

  if (issues.length > 0) throw new ConfigError(issues);
  return { serverId, controlPlaneGrpc, natsServers, logLevel };
}

/** The configuration as it may be logged: credentials in NATS URLs are masked. */
export function describeConfig(config: AgentConfig): Record<string, unknown> {
  return {
    serverId: config.serverId,
    controlPlaneGrpc: config.controlPlaneGrpc,
    natsServers: config.natsServers.map(maskCredentials),
    logLevel: config.logLevel,
  };
}

function isNatsUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return NATS_PROTOCOLS.has(url.protocol) && url.hostname !== '';
}

function maskCredentials(value: string): string {
  const url = new URL(value);
  if (url.username === '' && url.password === '') return value;
  url.username = '***';
  url.password = '';
  return url.toString();
}
