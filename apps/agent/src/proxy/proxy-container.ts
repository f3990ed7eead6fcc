/**
 * The `skiff-proxy` container as the agent creates it: Caddy on the platform network,
 * publishing HTTP and HTTPS (and the dashboard port when configured), booting from the last
 * good config, its admin API on a unix socket in a host directory the agent shares, and
 * `host.docker.internal` naming the host (the platform domain's upstream). Pure: the spec
 * from the settings.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { MANAGED_LABEL, type ContainerSpec } from '../docker/driver.js';
import type { CaddyConfig } from './last-good.js';

export const PROXY_KIND_LABEL = 'skiff.kind';
/** Hash of the spec the container was created from: a container from another spec is recreated. */
export const PROXY_SPEC_LABEL = 'skiff.proxy.spec';

/** Where the agent's `<data>/proxy` directory appears in the container (read-only). */
const CONFIG_DIR = '/etc/skiff-proxy';
/** Where the admin socket's host directory appears in the container. */
const SOCKET_DIR = '/run/caddy';
const SOCKET_NAME = 'admin.sock';
export const LAST_GOOD_FILE = 'last-good.json';
/** The dashboard server's listener inside the container (rendered when the dashboard is on). */
export const DASHBOARD_CONTAINER_PORT = 2020;

export interface ProxyContainerSettings {
  name: string;
  image: string;
  network: string;
  /** The named volume of Caddy's data (certificates, ACME accounts). */
  volume: string;
  /** The agent's `<data>/proxy` directory (absolute). */
  hostDir: string;
  ports: { http: number; https: number; hostIp?: string };
  /** Where the dashboard port is published; null: not published. */
  dashboard?: { port: number; hostIp?: string } | null;
}

/** The host paths of the proxy's files under the agent's `<data>/proxy`. */
export function proxyPaths(hostDir: string) {
  const socketDir = join(hostDir, 'run');
  return { dir: hostDir, socketDir, socket: join(socketDir, SOCKET_NAME), lastGood: join(hostDir, LAST_GOOD_FILE) };
}

/**
 * The admin block every loaded config gets, whatever the renderer wrote: the admin API on the
 * shared socket only (no TCP listener, no remote admin), and no autosave copy of the config
 * (it may hold keys) in the container.
 */
export const ADMIN_BLOCK = { listen: `unix/${SOCKET_DIR}/${SOCKET_NAME}`, config: { persist: false } } as const;

export function withAdminSocket(config: CaddyConfig): CaddyConfig {
  return { ...config, admin: structuredClone(ADMIN_BLOCK) };
}

/** The config of a proxy that has had no good config yet: the admin socket and nothing else. */
export function bootConfig(): CaddyConfig {
  return withAdminSocket({});
}

export function proxyContainerSpec(settings: ProxyContainerSettings): ContainerSpec {
  const binding = (port: number, hostIp = settings.ports.hostIp) => [{ ...(hostIp ? { HostIp: hostIp } : {}), HostPort: String(port) }];
  const paths = proxyPaths(settings.hostDir);
  // 443/udp: HTTP/3, which Caddy offers on its HTTPS listener.
  const exposed: Record<string, Record<string, never>> = { '80/tcp': {}, '443/tcp': {}, '443/udp': {} };
  const published: Record<string, ReturnType<typeof binding>> = {
    '80/tcp': binding(settings.ports.http),
    '443/tcp': binding(settings.ports.https),
    '443/udp': binding(settings.ports.https),
  };
  if (settings.dashboard) {
    const key = `${DASHBOARD_CONTAINER_PORT}/tcp`;
    exposed[key] = {};
    published[key] = binding(settings.dashboard.port, settings.dashboard.hostIp);
  }
  const spec: ContainerSpec = {
    Name: settings.name,
    Labels: { [MANAGED_LABEL]: 'true', [PROXY_KIND_LABEL]: 'proxy' },
    Image: settings.image,
    Cmd: ['caddy', 'run', '--config', `${CONFIG_DIR}/${LAST_GOOD_FILE}`],
    Env: ['XDG_DATA_HOME=/data', 'XDG_CONFIG_HOME=/config'],
    ExposedPorts: exposed,
    HostConfig: {
      // The directory, not the file: the file is replaced by a rename, which a file bind
      // mount would not follow.
      Mounts: [
        { Type: 'bind', Source: paths.dir, Target: CONFIG_DIR, ReadOnly: true },
        { Type: 'bind', Source: paths.socketDir, Target: SOCKET_DIR },
        { Type: 'volume', Source: settings.volume, Target: '/data' },
      ],
      PortBindings: published,
      RestartPolicy: { Name: 'unless-stopped' },
      Init: true,
      NetworkMode: settings.network,
      ExtraHosts: ['host.docker.internal:host-gateway'],
    },
  };
  const hash = createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 16);
  spec.Labels[PROXY_SPEC_LABEL] = hash;
  return spec;
}
