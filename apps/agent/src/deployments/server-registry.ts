/**
 * The registry Skiff runs on a server whose swarm has several nodes and no configured one
 * (SKIFF_CLUSTER_REGISTRY). Started at the first build that needs it, so a single-node
 * server never runs it.
 *
 * Every engine takes a registry on 127.0.0.0/8 without TLS or an insecure-registries entry,
 * so each node reaches it on its own loopback:
 * - `skiff-registry`: the registry, one task on this manager, data on the volume
 *   `skiff-registry-data`, published in host mode on `port`. The manager's engine pushes to
 *   `127.0.0.1:<port>`.
 * - `skiff-registry-mirror`: a pull-through mirror on every node (global), published in host
 *   mode on `port + 1`, which fetches from `skiff-registry` over the overlay network
 *   `skiff-registry`. Services name `127.0.0.1:<port + 1>/<image>@<digest>`, so every node
 *   pulls exactly what was pushed from its own loopback.
 * (Swarm's routing mesh would do with one port, but it needs IPVS, which not every kernel has.)
 *
 * Both answer only the agent's login (htpasswd), generated once and kept in the agent's data
 * directory (0600): their ports are open on the nodes' addresses, so other containers there
 * reach them. The login reaches the engine only as Swarm secrets and `X-Registry-Auth`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DockerDriver, ServiceSpec } from '../docker/driver.js';
import { MANAGED_LABEL } from '../docker/driver.js';
import type { NodeSummary } from '../docker/swarm-nodes.js';
import type { ClusterRegistry } from './cluster-image.js';

export const REGISTRY_SERVICE = 'skiff-registry';
export const MIRROR_SERVICE = 'skiff-registry-mirror';
export const REGISTRY_NETWORK = 'skiff-registry';
export const REGISTRY_VOLUME = 'skiff-registry-data';
export const MIRROR_VOLUME = 'skiff-registry-mirror';
const ROLE_LABEL = 'skiff.role';
const CONTAINER_PORT = 5000;
const SECRETS_DIR = '/run/secrets';

export interface ServerRegistrySettings {
  image: string;
  port: number;
}

/** The agent's login to its registry; `htpasswd` is its bcrypt line, made once so the secrets stay the same. */
export interface RegistryLogin {
  username: string;
  password: string;
  htpasswd: string;
  httpSecret: string;
}

type Driver = Pick<DockerDriver, 'ensureSecret' | 'ensureNetwork' | 'createOrUpdateService' | 'serviceTasks' | 'imageExists' | 'pullImage'>;

export interface ServerRegistryDeps {
  driver: Driver;
  settings: ServerRegistrySettings;
  dataDir: string;
  /** Longest wait for the registry's task to run. */
  startTimeoutMs?: number;
}

export class ServerRegistry {
  constructor(private readonly deps: ServerRegistryDeps) {}

  /** Starts (or keeps) the registry and the mirrors; answers where to push and where the nodes pull. */
  async ensure(nodes: NodeSummary[], signal?: AbortSignal): Promise<ClusterRegistry> {
    const { driver, settings } = this.deps;
    const self = nodes.find((n) => n.self);
    if (!self) throw new Error('this engine is not among the swarm nodes listed');
    if (!(await driver.imageExists(settings.image))) {
      await driver.pullImage(settings.image, { signal }).catch((err: unknown) => {
        throw new Error(`the server registry's image ${settings.image} is not on this node and could not be pulled (SKIFF_SERVER_REGISTRY_IMAGE): ${err instanceof Error ? err.message : String(err)}`);
      });
    }
    const login = await loadLogin(this.deps.dataDir);
    await driver.ensureNetwork(REGISTRY_NETWORK);
    const secret = (role: string, content: string) => {
      const name = `${role}-${createHash('sha256').update(content).digest('hex').slice(0, 12)}`;
      return driver.ensureSecret(name, content, { [ROLE_LABEL]: 'server-registry' }).then((id) => ({ id, name }));
    };
    const htpasswd = await secret('skiff-registry-htpasswd', login.htpasswd);
    const registryConfig = await secret('skiff-registry-config', registryConfigText(login, null));
    const mirrorConfig = await secret('skiff-registry-mirror-config', registryConfigText(login, login));
    await driver.createOrUpdateService(registryServiceSpec(settings, self.id, registryConfig, htpasswd));
    await driver.createOrUpdateService(mirrorServiceSpec(settings, mirrorConfig, htpasswd));
    await this.running(REGISTRY_SERVICE, 1, signal);
    const ready = nodes.filter((n) => n.state === 'ready' && n.availability === 'active').length;
    // A mirror that is late only delays that node's tasks (Swarm retries their pull).
    await this.running(MIRROR_SERVICE, Math.max(1, ready), signal).catch(() => undefined);
    return {
      address: `127.0.0.1:${settings.port}`,
      pullAddress: `127.0.0.1:${settings.port + 1}`,
      username: login.username,
      password: login.password,
    };
  }

  private async running(service: string, count: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + (this.deps.startTimeoutMs ?? 90_000);
    let last = '';
    while (Date.now() < deadline && !signal?.aborted) {
      const tasks = await this.deps.driver.serviceTasks(service);
      if (tasks.filter((t) => t.state === 'running' && t.desiredState === 'running').length >= count) return;
      const failed = tasks.find((t) => t.error);
      last = failed?.error ?? tasks[0]?.message ?? '';
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`the service ${service} did not start${last ? `: ${last}` : ''}`);
  }
}

/** The registry's configuration (YAML takes JSON); with `upstream`, a pull-through mirror of `skiff-registry`. */
export function registryConfigText(login: Pick<RegistryLogin, 'httpSecret'>, upstream: Pick<RegistryLogin, 'username' | 'password'> | null): string {
  return JSON.stringify({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: '/var/lib/registry' }, delete: { enabled: true } },
    http: { addr: `:${CONTAINER_PORT}`, secret: login.httpSecret },
    auth: { htpasswd: { realm: 'skiff', path: `${SECRETS_DIR}/htpasswd` } },
    ...(upstream ? { proxy: { remoteurl: `http://${REGISTRY_SERVICE}:${CONTAINER_PORT}`, username: upstream.username, password: upstream.password } } : {}),
  });
}

type SecretRef = { id: string; name: string };

const secretFile = (ref: SecretRef, file: string) => ({ SecretID: ref.id, SecretName: ref.name, File: { Name: file, UID: '0', GID: '0', Mode: 0o400 } });
const labels = { [MANAGED_LABEL]: 'true', [ROLE_LABEL]: 'server-registry' };

function baseSpec(name: string, settings: ServerRegistrySettings, config: SecretRef, htpasswd: SecretRef, volume: string, published: number): ServiceSpec {
  return {
    Name: name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: settings.image,
        Labels: labels,
        Command: ['registry', 'serve', `${SECRETS_DIR}/config.yml`],
        Mounts: [{ Type: 'volume', Source: volume, Target: '/var/lib/registry', VolumeOptions: { Labels: labels } }],
        Secrets: [secretFile(config, 'config.yml'), secretFile(htpasswd, 'htpasswd')],
      },
      RestartPolicy: { Condition: 'any', Delay: 2_000_000_000 },
      Networks: [{ Target: REGISTRY_NETWORK }],
    },
    EndpointSpec: { Mode: 'dnsrr', Ports: [{ Protocol: 'tcp', TargetPort: CONTAINER_PORT, PublishedPort: published, PublishMode: 'host' }] },
  };
}

export function registryServiceSpec(settings: ServerRegistrySettings, nodeId: string, config: SecretRef, htpasswd: SecretRef): ServiceSpec {
  const spec = baseSpec(REGISTRY_SERVICE, settings, config, htpasswd, REGISTRY_VOLUME, settings.port);
  // Kept on this node, with its data volume.
  return { ...spec, TaskTemplate: { ...spec.TaskTemplate, Placement: { Constraints: [`node.id==${nodeId}`] } }, Mode: { Replicated: { Replicas: 1 } } };
}

export function mirrorServiceSpec(settings: ServerRegistrySettings, config: SecretRef, htpasswd: SecretRef): ServiceSpec {
  return { ...baseSpec(MIRROR_SERVICE, settings, config, htpasswd, MIRROR_VOLUME, settings.port + 1), Mode: { Global: {} } };
}

/** The login in `<dataDir>/server-registry.json`, made (0600) the first time. */
export async function loadLogin(dataDir: string): Promise<RegistryLogin> {
  const file = join(dataDir, 'server-registry.json');
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as Partial<RegistryLogin>;
    if (stored.username && stored.password && stored.htpasswd && stored.httpSecret) return stored as RegistryLogin;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { hash } = await import('bcryptjs');
  const username = 'skiff';
  const password = randomBytes(24).toString('base64url');
  const login: RegistryLogin = { username, password, htpasswd: `${username}:${await hash(password, 10)}\n`, httpSecret: randomBytes(16).toString('hex') };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, JSON.stringify(login), { mode: 0o600 });
  await rename(temporary, file);
  return login;
}
