/** The agent's configuration, read from its environment at the composition root. */
import { isIP } from 'node:net';
import { parseCommandKey } from '@skiff/domain';

export interface AgentConfig {
  /** This server's id; also a NATS subject token (`agent.<serverId>.cmd`). SKIFF_SERVER_ID. */
  serverId: string;
  /** gRPC target of the control plane's report server (`host:port`, `dns:///host:port`, `unix:///path`). SKIFF_CONTROL_PLANE_GRPC. */
  controlPlaneGrpc: string;
  /** NATS server URLs (`nats://` or `tls://`), from the comma-separated SKIFF_NATS_URL. May carry credentials. */
  natsServers: string[];
  /** SKIFF_LOG_LEVEL, default `info`. */
  logLevel: LogLevel;
  /**
   * Where the agent presents its server credential from (`authorization: Bearer …` on
   * every report): SKIFF_AGENT_CREDENTIAL itself, or the 0600 file SKIFF_AGENT_CREDENTIAL_FILE
   * names (read by main); at most one of the two. Neither (`stored`): the credential a join
   * stored in the data directory (credential.ts). Never logged.
   */
  credential: { value: string } | { file: string } | { stored: true };
  /**
   * SKIFF_JOIN_TOKEN: the one-time token of `server.create`'s join command. Used once: the
   * credential it brings is stored in the data directory and used from then on (a restart
   * with the same token does not join again). Not with an explicit credential. Never logged.
   */
  joinToken?: string;
  /**
   * The control plane's CA, the only one the agent trusts for gRPC and NATS (TLS):
   * SKIFF_CONTROL_PLANE_CA (base64 of its PEM, as join commands carry it; kept in the data
   * directory) or the file SKIFF_CA_FILE names (tools/up's local agent); neither (`stored`):
   * the one a join kept (channel-ca.ts). Without any, only loopback addresses are used, in clear.
   */
  ca: { pem: string } | { file: string } | { stored: true };
  /**
   * SKIFF_COMMAND_KEY: the control plane's public command key (base64 SPKI Ed25519), which
   * signs every command and control request. Pinned in the data directory at the first start
   * (command-key.ts); afterwards it may be left out, and a different one is refused unless
   * this start joins with a new token.
   */
  commandKey?: string;
  /** The agent's own directory (its command journal), SKIFF_AGENT_DATA_DIR, default `/var/lib/skiff-agent`. */
  dataDir: string;
  /** Deploys run at once on this server, SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS, default 1. */
  maxConcurrentDeploys: number;
  /** The Docker Engine's unix socket, SKIFF_DOCKER_SOCKET, default `/var/run/docker.sock`. */
  dockerSocket: string;
  /** The docker CLI builds run with, SKIFF_DOCKER_CLI; null: /usr/bin/docker when present, else `docker` on PATH. */
  dockerCli: string | null;
  /** Longest build of one deployment, SKIFF_BUILD_TIMEOUT_SECONDS, default 1800 (the command's deadline may end it sooner). */
  buildTimeoutMs: number;
  /**
   * The cap all builds of this server share (build/build-cap.ts): SKIFF_BUILD_CPUS (default
   * null: half the machine's cores, at least 1), SKIFF_BUILD_MEMORY (default 2g; `0`: no
   * memory cap), SKIFF_BUILD_CGROUP (the engine's BuildKit cgroup, default `docker/buildkit`).
   */
  buildCap: { cpus: number | null; memoryBytes: number; cgroup: string };
  /**
   * SKIFF_AGENT_JOURNAL_COMPACT_SECONDS, default 1: how soon after commands finish the journal
   * is rewritten without their payloads (pipeline/journal.ts).
   */
  journalCompactMs: number;
  /**
   * The Docker Compose program of `container-compose` stacks, SKIFF_COMPOSE_PROGRAM: `docker
   * compose` (the CLI plugin), `<docker cli> compose`, or a docker-compose program; null:
   * found at start (compose/program.ts).
   */
  composeProgram: string | null;
  /** The reverse proxy (`skiff-proxy`, Caddy) the agent runs for the server's domains. */
  proxy: ProxySettings;
  /**
   * The registry the nodes of a multi-node swarm pull built images from
   * (deployments/cluster-image.ts): SKIFF_CLUSTER_REGISTRY (`host[:port]`), with
   * SKIFF_CLUSTER_REGISTRY_USERNAME and SKIFF_CLUSTER_REGISTRY_PASSWORD (or the file
   * SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE names, read by main) when it needs a login (never
   * logged); null: none.
   */
  clusterRegistry: { address: string; username?: string; password?: string; passwordFile?: string } | null;
  /**
   * The registry the agent runs itself when the swarm has several nodes and no
   * SKIFF_CLUSTER_REGISTRY is set (deployments/server-registry.ts): its image,
   * SKIFF_SERVER_REGISTRY_IMAGE (default `registry:2`), and the port it publishes on the
   * manager, SKIFF_SERVER_REGISTRY_PORT (default 5030); each node's mirror publishes the next.
   */
  serverRegistry: { image: string; port: number };
  /** Seconds between metric samples of the host and Skiff's containers, SKIFF_METRICS_INTERVAL_SECONDS, default 10; 0: no sampling. */
  metricsIntervalMs: number;
}

export type ProxyIssuer = 'acme' | 'internal';

export interface ProxySettings {
  /** Host ports published for the proxy's HTTP and HTTPS listeners, SKIFF_PROXY_HTTP_PORT (80) and SKIFF_PROXY_HTTPS_PORT (443). */
  httpPort: number;
  httpsPort: number;
  /** The host address the ports are published on, SKIFF_PROXY_BIND, default 0.0.0.0. */
  bind: string;
  /** The proxy container's name, SKIFF_PROXY_CONTAINER, default `skiff-proxy`; its data volume is `<name>-data`. */
  container: string;
  /** Who issues the certificates of `acme` domains, SKIFF_PROXY_ISSUER: `acme` (default) or `internal` (Caddy's own CA, for tests). */
  issuer: ProxyIssuer;
  /** The ACME account's address, SKIFF_PROXY_ACME_EMAIL; null: none. */
  acmeEmail: string | null;
  /**
   * The host port the proxy dashboard (Caddy's metrics, container port 2020) is published
   * on, SKIFF_PROXY_DASHBOARD_PORT, default 2020; 0: not published (the dashboard cannot be
   * turned on).
   */
  dashboardPort: number;
  /** The host address the dashboard port is published on, SKIFF_PROXY_DASHBOARD_BIND, default 127.0.0.1. */
  dashboardBind: string;
}

export const DEFAULT_DATA_DIR = '/var/lib/skiff-agent';
export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

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
// What the engine accepts as a container name.
const CONTAINER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const PROXY_ISSUERS: readonly ProxyIssuer[] = ['acme', 'internal'];

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

  const credentialValue = env.SKIFF_AGENT_CREDENTIAL?.trim() ?? '';
  const credentialFile = env.SKIFF_AGENT_CREDENTIAL_FILE?.trim() ?? '';
  const joinToken = env.SKIFF_JOIN_TOKEN?.trim() ?? '';
  if (credentialValue !== '' && credentialFile !== '') {
    issues.push('set only one of SKIFF_AGENT_CREDENTIAL and SKIFF_AGENT_CREDENTIAL_FILE');
  } else if (credentialFile !== '' && !credentialFile.startsWith('/')) {
    issues.push('SKIFF_AGENT_CREDENTIAL_FILE must be an absolute path');
  }
  if (joinToken !== '' && (credentialValue !== '' || credentialFile !== '')) {
    issues.push('SKIFF_JOIN_TOKEN cannot be used with SKIFF_AGENT_CREDENTIAL or SKIFF_AGENT_CREDENTIAL_FILE');
  }
  const credential: AgentConfig['credential'] =
    credentialFile !== '' ? { file: credentialFile } : credentialValue !== '' ? { value: credentialValue } : { stored: true };

  const ca = readCa(env, issues);
  const commandKey = env.SKIFF_COMMAND_KEY?.trim() ?? '';
  if (commandKey !== '') {
    try {
      parseCommandKey(commandKey);
    } catch (err) {
      issues.push(`SKIFF_COMMAND_KEY must be the control plane's Ed25519 public key in base64 SPKI form (${(err as Error).message})`);
    }
  }

  if (joinToken !== '' && commandKey === '') issues.push('SKIFF_JOIN_TOKEN needs SKIFF_COMMAND_KEY: start the agent with the whole join command');

  const dataDir = env.SKIFF_AGENT_DATA_DIR?.trim() || DEFAULT_DATA_DIR;
  if (!dataDir.startsWith('/')) issues.push('SKIFF_AGENT_DATA_DIR must be an absolute path');

  const dockerSocket = env.SKIFF_DOCKER_SOCKET?.trim() || DEFAULT_DOCKER_SOCKET;
  if (!dockerSocket.startsWith('/')) issues.push('SKIFF_DOCKER_SOCKET must be an absolute path');

  const concurrency = env.SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS?.trim() || '1';
  const maxConcurrentDeploys = Number(concurrency);
  if (!/^\d+$/.test(concurrency) || maxConcurrentDeploys < 1 || maxConcurrentDeploys > 64) {
    issues.push('SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS must be a whole number from 1 to 64');
  }

  const dockerCli = env.SKIFF_DOCKER_CLI?.trim() || null;
  const journalCompact = env.SKIFF_AGENT_JOURNAL_COMPACT_SECONDS?.trim() || '1';
  const journalCompactMs = Number(journalCompact) * 1000;
  if (!/^\d+$/.test(journalCompact) || journalCompactMs > 24 * 3600_000) {
    issues.push('SKIFF_AGENT_JOURNAL_COMPACT_SECONDS must be a whole number of seconds from 0 to 86400');
  }
  const buildTimeout = env.SKIFF_BUILD_TIMEOUT_SECONDS?.trim() || '1800';
  const buildTimeoutMs = Number(buildTimeout) * 1000;
  if (!/^\d+$/.test(buildTimeout) || buildTimeoutMs < 1000 || buildTimeoutMs > 24 * 3600_000) {
    issues.push('SKIFF_BUILD_TIMEOUT_SECONDS must be a whole number of seconds from 1 to 86400');
  }

  const buildCap = readBuildCap(env, issues);

  const composeProgram = env.SKIFF_COMPOSE_PROGRAM?.trim() || null;
  if (composeProgram !== null && !/^\S+( compose)?$/.test(composeProgram)) {
    issues.push('SKIFF_COMPOSE_PROGRAM must be `docker compose`, `<docker cli> compose` or a docker-compose program');
  }

  const proxy = readProxySettings(env, issues);
  const clusterRegistry = readClusterRegistry(env, issues);
  const serverRegistry = readServerRegistry(env, issues);

  const metricsInterval = env.SKIFF_METRICS_INTERVAL_SECONDS?.trim() || '10';
  const metricsIntervalMs = Number(metricsInterval) * 1000;
  if (!/^\d+$/.test(metricsInterval) || metricsIntervalMs > 3600_000) {
    issues.push('SKIFF_METRICS_INTERVAL_SECONDS must be a whole number of seconds from 0 (no sampling) to 3600');
  }

  if (issues.length > 0) throw new ConfigError(issues);
  return {
    serverId,
    controlPlaneGrpc,
    natsServers,
    logLevel,
    credential,
    ...(joinToken !== '' ? { joinToken } : {}),
    ca,
    ...(commandKey !== '' ? { commandKey } : {}),
    dataDir,
    maxConcurrentDeploys,
    dockerSocket,
    dockerCli,
    buildTimeoutMs,
    buildCap,
    journalCompactMs,
    composeProgram,
    proxy,
    clusterRegistry,
    serverRegistry,
    metricsIntervalMs,
  };
}

function readServerRegistry(env: Env, issues: string[]): AgentConfig['serverRegistry'] {
  const image = env.SKIFF_SERVER_REGISTRY_IMAGE?.trim() || 'registry:2';
  if (!/^[a-z0-9][a-z0-9._/:@-]*$/.test(image)) issues.push('SKIFF_SERVER_REGISTRY_IMAGE must be an image reference');
  const portText = env.SKIFF_SERVER_REGISTRY_PORT?.trim() || '5030';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65534) issues.push('SKIFF_SERVER_REGISTRY_PORT must be a port from 1 to 65534 (the mirror takes the next)');
  return { image, port };
}

/** The engine's BuildKit cgroup with the cgroupfs driver (SKIFF_BUILD_CGROUP's default). */
export const DEFAULT_BUILD_CGROUP = 'docker/buildkit';

/** SKIFF_BUILD_MEMORY: bytes, or a number with k, m, g (binary units, as docker takes them); null: invalid. */
export function parseMemory(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?$/i.exec(text.trim());
  if (!match) return null;
  const unit = (match[2] ?? 'b').toLowerCase()[0]!;
  const factor = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit as 'b' | 'k' | 'm' | 'g'];
  return Math.round(Number(match[1]) * factor);
}

function readBuildCap(env: Env, issues: string[]): AgentConfig['buildCap'] {
  const cpusText = env.SKIFF_BUILD_CPUS?.trim() ?? '';
  const cpus = cpusText === '' ? null : Number(cpusText);
  if (cpus !== null && (!/^\d+(\.\d+)?$/.test(cpusText) || cpus > 1024)) {
    issues.push('SKIFF_BUILD_CPUS must be a number of CPUs from 0 (no cap) to 1024, e.g. 1.5');
  }
  const memoryBytes = parseMemory(env.SKIFF_BUILD_MEMORY?.trim() || '2g');
  if (memoryBytes === null || (memoryBytes > 0 && memoryBytes < 6 * 1024 ** 2)) {
    issues.push('SKIFF_BUILD_MEMORY must be 0 (no cap) or at least 6m, in bytes or with k, m or g (e.g. 2g)');
  }
  const cgroup = env.SKIFF_BUILD_CGROUP?.trim() || DEFAULT_BUILD_CGROUP;
  if (!/^[A-Za-z0-9_.:@-]+(\/[A-Za-z0-9_.:@-]+)*$/.test(cgroup) || cgroup.split('/').some((part) => part === '..' || part === '.')) {
    issues.push('SKIFF_BUILD_CGROUP must be a cgroup path relative to the cgroup mount, e.g. docker/buildkit');
  }
  return { cpus, memoryBytes: memoryBytes ?? 0, cgroup };
}

function readClusterRegistry(env: Env, issues: string[]): AgentConfig['clusterRegistry'] {
  const address = env.SKIFF_CLUSTER_REGISTRY?.trim() ?? '';
  const username = env.SKIFF_CLUSTER_REGISTRY_USERNAME?.trim() ?? '';
  const password = env.SKIFF_CLUSTER_REGISTRY_PASSWORD ?? '';
  const passwordFile = env.SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE?.trim() ?? '';
  if (address === '') {
    if (username !== '' || password !== '' || passwordFile !== '') issues.push('SKIFF_CLUSTER_REGISTRY_USERNAME and SKIFF_CLUSTER_REGISTRY_PASSWORD(_FILE) need SKIFF_CLUSTER_REGISTRY');
    return null;
  }
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(address)) issues.push('SKIFF_CLUSTER_REGISTRY must be a registry host with an optional port (`registry.example.com:5000`)');
  if ((password !== '' || passwordFile !== '') && username === '') issues.push('SKIFF_CLUSTER_REGISTRY_PASSWORD needs SKIFF_CLUSTER_REGISTRY_USERNAME');
  if (password !== '' && passwordFile !== '') issues.push('set only one of SKIFF_CLUSTER_REGISTRY_PASSWORD and SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE');
  if (passwordFile !== '' && !passwordFile.startsWith('/')) issues.push('SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE must be an absolute path');
  if (username === '') return { address };
  return passwordFile !== '' ? { address, username, passwordFile } : { address, username, password };
}

function readCa(env: Env, issues: string[]): AgentConfig['ca'] {
  const encoded = env.SKIFF_CONTROL_PLANE_CA?.trim() ?? '';
  const file = env.SKIFF_CA_FILE?.trim() ?? '';
  if (encoded !== '' && file !== '') issues.push('set only one of SKIFF_CONTROL_PLANE_CA and SKIFF_CA_FILE');
  if (file !== '') {
    if (!file.startsWith('/')) issues.push('SKIFF_CA_FILE must be an absolute path');
    return { file };
  }
  if (encoded === '') return { stored: true };
  const pem = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : '';
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) issues.push('SKIFF_CONTROL_PLANE_CA must be a PEM certificate in base64 (as the join command gives it)');
  return { pem };
}

function readProxySettings(env: Env, issues: string[]): ProxySettings {
  const readPort = (name: string, fallback: number, lowest = 1): number => {
    const text = env[name]?.trim() || String(fallback);
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < lowest || value > 65535) issues.push(`${name} must be a port from ${lowest} to 65535`);
    return value;
  };
  const httpPort = readPort('SKIFF_PROXY_HTTP_PORT', 80);
  const httpsPort = readPort('SKIFF_PROXY_HTTPS_PORT', 443);
  if (httpPort === httpsPort) issues.push('SKIFF_PROXY_HTTP_PORT and SKIFF_PROXY_HTTPS_PORT must differ');

  const bind = env.SKIFF_PROXY_BIND?.trim() || '0.0.0.0';
  if (isIP(bind) === 0) issues.push('SKIFF_PROXY_BIND must be an IPv4 or IPv6 address');

  const container = env.SKIFF_PROXY_CONTAINER?.trim() || 'skiff-proxy';
  if (!CONTAINER_NAME.test(container)) issues.push('SKIFF_PROXY_CONTAINER must be a container name (letters, digits, "_", "." or "-")');

  const issuer = (env.SKIFF_PROXY_ISSUER?.trim() || 'acme') as ProxyIssuer;
  if (!PROXY_ISSUERS.includes(issuer)) issues.push(`SKIFF_PROXY_ISSUER must be one of ${PROXY_ISSUERS.join(', ')}`);

  const acmeEmail = env.SKIFF_PROXY_ACME_EMAIL?.trim() || null;
  if (acmeEmail !== null && !/^[^\s@]+@[^\s@]+$/.test(acmeEmail)) issues.push('SKIFF_PROXY_ACME_EMAIL must be an email address');

  const dashboardPort = readPort('SKIFF_PROXY_DASHBOARD_PORT', 2020, 0);
  if (dashboardPort !== 0 && (dashboardPort === httpPort || dashboardPort === httpsPort)) {
    issues.push('SKIFF_PROXY_DASHBOARD_PORT must differ from SKIFF_PROXY_HTTP_PORT and SKIFF_PROXY_HTTPS_PORT');
  }
  const dashboardBind = env.SKIFF_PROXY_DASHBOARD_BIND?.trim() || '127.0.0.1';
  if (isIP(dashboardBind) === 0) issues.push('SKIFF_PROXY_DASHBOARD_BIND must be an IPv4 or IPv6 address');

  return { httpPort, httpsPort, bind, container, issuer, acmeEmail, dashboardPort, dashboardBind };
}

/** The configuration as it may be logged: credentials in NATS URLs are masked. */
export function describeConfig(config: AgentConfig): Record<string, unknown> {
  return {
    serverId: config.serverId,
    controlPlaneGrpc: config.controlPlaneGrpc,
    natsServers: config.natsServers.map(maskCredentials),
    logLevel: config.logLevel,
    credential: 'file' in config.credential ? { file: config.credential.file } : 'stored' in config.credential ? 'stored' : 'set',
    joinToken: config.joinToken ? 'set' : undefined,
    ca: 'file' in config.ca ? { file: config.ca.file } : 'stored' in config.ca ? 'stored' : 'given',
    commandKey: config.commandKey ? 'set' : undefined,
    dataDir: config.dataDir,
    maxConcurrentDeploys: config.maxConcurrentDeploys,
    dockerSocket: config.dockerSocket,
    dockerCli: config.dockerCli ?? 'default',
    buildTimeoutMs: config.buildTimeoutMs,
    buildCap: config.buildCap,
    composeProgram: config.composeProgram ?? 'detected',
    proxy: config.proxy,
    clusterRegistry: config.clusterRegistry ? { address: config.clusterRegistry.address, login: config.clusterRegistry.username ? 'set' : 'none' } : 'none',
    metricsIntervalMs: config.metricsIntervalMs,
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
