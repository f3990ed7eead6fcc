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
 * - `skiff-registry-reader`: the same storage served read-only on the overlay network
 *   `skiff-registry` only (no published port), on the same node. A pull-through mirror cannot
 *   log in to an upstream with basic auth (distribution 2.8 looks its login up by the
 *   challenge's realm), so the mirrors read from this one.
 * - `skiff-registry-mirror`: a pull-through mirror of the reader on every node (global),
 *   published in host mode on `port + 1`. Services name
 *   `127.0.0.1:<port + 1>/<image>@<digest>`, so every node pulls exactly what was pushed from
 *   its own loopback.
 * (Swarm's routing mesh would do with one port, but it needs IPVS, which not every kernel has.)
 *
 * The published ones answer only the agent's login (htpasswd), generated once and kept in the
 * agent's data directory (0600): their ports are open on the nodes' addresses, so other
 * containers there reach them. The login reaches the engine only as a Swarm secret (the
 * htpasswd line) and in `X-Registry-Auth`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DockerDriver, ServiceSpec } from '../docker/driver.js';
import { MANAGED_LABEL } from '../docker/driver.js';
import type { NodeSummary } from '../docker/swarm-nodes.js';
import type { ClusterRegistry } from './cluster-image.js';
import type { RegistryObjects } from '../docker/registry-objects.js';
import { pruneRegistrySecrets } from './server-registry-teardown.js';

export const REGISTRY_SERVICE = 'skiff-registry';
export const READER_SERVICE = 'skiff-registry-reader';
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
  /** Prunes the secrets older configurations left (server-registry-teardown.ts); absent: they stay. */
  objects?: RegistryObjects;
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
    const registryConfig = await secret('skiff-registry-config', registryConfigText(login, 'registry'));
    const readerConfig = await secret('skiff-registry-reader-config', registryConfigText(login, 'reader'));
    const mirrorConfig = await secret('skiff-registry-mirror-config', registryConfigText(login, 'mirror'));
    await driver.createOrUpdateService(registryServiceSpec(settings, self.id, registryConfig, htpasswd));
    await driver.createOrUpdateService(readerServiceSpec(settings, self.id, readerConfig));
    await driver.createOrUpdateService(mirrorServiceSpec(settings, mirrorConfig, htpasswd));
    if (this.deps.objects) await pruneRegistrySecrets(this.deps.objects, [htpasswd, registryConfig, readerConfig, mirrorConfig].map((s) => s.name));
    await this.running(REGISTRY_SERVICE, 1, signal);
    await this.running(READER_SERVICE, 1, signal);
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

export type RegistryRole = 'registry' | 'reader' | 'mirror';

/**
 * A configuration (YAML takes JSON): `registry` takes pushes with the login, `reader` serves
 * the same storage read-only without a login (on the overlay network only), `mirror` pulls
 * through the reader and answers the login.
 */
export function registryConfigText(login: Pick<RegistryLogin, 'httpSecret'>, role: RegistryRole): string {
  const auth = { htpasswd: { realm: 'skiff', path: `${SECRETS_DIR}/htpasswd` } };
  return JSON.stringify({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: {
      filesystem: { rootdirectory: '/var/lib/registry' },
      delete: { enabled: role === 'registry' },
      ...(role === 'reader' ? { maintenance: { readonly: { enabled: true }, uploadpurging: { enabled: false } } } : {}),
    },
    http: { addr: `:${CONTAINER_PORT}`, secret: login.httpSecret },
    ...(role === 'reader' ? {} : { auth }),
    ...(role === 'mirror' ? { proxy: { remoteurl: `http://${READER_SERVICE}:${CONTAINER_PORT}` } } : {}),
  });
}

type SecretRef = { id: string; name: string };

const secretFile = (ref: SecretRef, file: string) => ({ SecretID: ref.id, SecretName: ref.name, File: { Name: file, UID: '0', GID: '0', Mode: 0o400 } });
const labels = { [MANAGED_LABEL]: 'true', [ROLE_LABEL]: 'server-registry' };

interface Role {
  config: SecretRef;
  htpasswd: SecretRef | null;
  volume: string;
  /** The host-mode port on each node it runs on, or null for none. */
  published: number | null;
  /** On the overlay network `skiff-registry` (the reader and the mirrors). */
  overlay: boolean;
}

function baseSpec(name: string, settings: ServerRegistrySettings, { config, htpasswd, volume, published, overlay }: Role): ServiceSpec {
  return {
    Name: name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: settings.image,
        Labels: labels,
        Command: ['registry', 'serve', `${SECRETS_DIR}/config.yml`],
        Mounts: [{ Type: 'volume', Source: volume, Target: '/var/lib/registry', VolumeOptions: { Labels: labels } }],
        Secrets: [secretFile(config, 'config.yml'), ...(htpasswd ? [secretFile(htpasswd, 'htpasswd')] : [])],
      },
      RestartPolicy: { Condition: 'any', Delay: 2_000_000_000 },
      ...(overlay ? { Networks: [{ Target: REGISTRY_NETWORK }] } : {}),
    },
    EndpointSpec: {
      Mode: 'dnsrr',
      ...(published === null ? {} : { Ports: [{ Protocol: 'tcp' as const, TargetPort: CONTAINER_PORT, PublishedPort: published, PublishMode: 'host' as const }] }),
    },
  };
}

/** Kept on this node, with its data volume. */
const onNode = (spec: ServiceSpec, nodeId: string): ServiceSpec => ({
  ...spec,
  TaskTemplate: { ...spec.TaskTemplate, Placement: { Constraints: [`node.id==${nodeId}`] } },
  Mode: { Replicated: { Replicas: 1 } },
});

export function registryServiceSpec(settings: ServerRegistrySettings, nodeId: string, config: SecretRef, htpasswd: SecretRef): ServiceSpec {
  return onNode(baseSpec(REGISTRY_SERVICE, settings, { config, htpasswd, volume: REGISTRY_VOLUME, published: settings.port, overlay: false }), nodeId);
}

export function readerServiceSpec(settings: ServerRegistrySettings, nodeId: string, config: SecretRef): ServiceSpec {
  const spec = baseSpec(READER_SERVICE, settings, { config, htpasswd: null, volume: REGISTRY_VOLUME, published: null, overlay: true });
  const mount = spec.TaskTemplate.ContainerSpec.Mounts![0]!;
  return onNode({ ...spec, TaskTemplate: { ...spec.TaskTemplate, ContainerSpec: { ...spec.TaskTemplate.ContainerSpec, Mounts: [{ ...mount, ReadOnly: true }] } } }, nodeId);
}

export function mirrorServiceSpec(settings: ServerRegistrySettings, config: SecretRef, htpasswd: SecretRef): ServiceSpec {
  return { ...baseSpec(MIRROR_SERVICE, settings, { config, htpasswd, volume: MIRROR_VOLUME, published: settings.port + 1, overlay: true }), Mode: { Global: {} } };
}

/**
 * The login in `<dataDir>/server-registry.json`, made (0600) the first time; a file found
 * readable by others is made 0600 again. Errors never quote the file (JSON.parse's would:
 * the message reaches deployment logs).
 */
export async function loadLogin(dataDir: string): Promise<RegistryLogin> {
  const file = join(dataDir, 'server-registry.json');
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text !== null) {
    if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
    let stored: Partial<RegistryLogin>;
    try {
      stored = JSON.parse(text) as Partial<RegistryLogin>;
    } catch {
      throw new Error(`${file} is not valid JSON: remove it to make a new login`);
    }
    if (stored.username && stored.password && stored.htpasswd && stored.httpSecret) return stored as RegistryLogin;
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
