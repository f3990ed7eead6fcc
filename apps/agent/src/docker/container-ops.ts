/**
 * The container.* reads and the runtime logs, against the Engine API. Only Skiff's objects
 * (`skiff.managed=true`) are listed, inspected, restarted or read: anything else answers as
 * if it did not exist.
 */
import type Dockerode from 'dockerode';
import { Readable } from 'node:stream';
import { MANAGED_LABEL } from './driver.js';
import { engineCall, isManaged, isNotFound } from './engine.js';

/** One container as `docker ps` shows it, with the labels that say whose it is. */
export interface ContainerSummary {
  containerId: string;
  name: string;
  image: string;
  state: string;
  status: string;
  /** ISO time. */
  created: string;
  ports: Array<{ privatePort: number; publicPort: number | null; type: string; ip: string | null }>;
  labels: Record<string, string>;
  /** Swarm tasks: the service and node they belong to. */
  serviceName: string | null;
  node: string | null;
}

export interface LogSource {
  stream: Readable;
  /** Without a TTY, stdout and stderr come multiplexed in 8-byte-headed frames. */
  tty: boolean;
}

export interface LogOptions {
  tail: number;
  sinceUnix: number;
  follow: boolean;
}

export interface ContainerOps {
  list(): Promise<ContainerSummary[]>;
  /** The inspect document of a Skiff container; null when there is none (or it is not Skiff's). */
  inspect(ref: string): Promise<Record<string, unknown> | null>;
  restart(id: string): Promise<void>;
  /** The labels of a Skiff service or container; null when there is none (or it is not Skiff's). */
  labelsOf(target: { serviceName?: string; containerId?: string }): Promise<Record<string, string> | null>;
  logs(target: { serviceName?: string; containerId?: string }, options: LogOptions): Promise<LogSource>;
}

const INTERESTING_LABEL = /^(skiff\.|com\.docker\.(compose\.(project|service)|stack\.namespace|swarm\.(service\.name|task\.name|node\.id)))/;

export class DockerodeContainerOps implements ContainerOps {
  /** `logDocker` reads log streams: without the request timeout of `docker`, which would cut a quiet followed log. */
  constructor(
    private readonly docker: Dockerode,
    private readonly logDocker: Dockerode = docker,
  ) {}

  async list(): Promise<ContainerSummary[]> {
    const items = await engineCall('listContainers', () =>
      this.docker.listContainers({ all: true, filters: { label: [`${MANAGED_LABEL}=true`] } }),
    );
    return items.map((c) => {
      const labels = Object.fromEntries(Object.entries(c.Labels ?? {}).filter(([k]) => INTERESTING_LABEL.test(k)));
      return {
        containerId: c.Id,
        name: (c.Names?.[0] ?? '').replace(/^\//, ''),
        image: c.Image,
        state: c.State,
        status: c.Status,
        created: new Date(c.Created * 1000).toISOString(),
        ports: (c.Ports ?? []).map((p) => ({ privatePort: p.PrivatePort, publicPort: p.PublicPort ?? null, type: p.Type, ip: p.IP ?? null })),
        labels,
        serviceName: labels['com.docker.swarm.service.name'] ?? null,
        node: labels['com.docker.swarm.node.id'] ?? null,
      };
    });
  }

  async inspect(ref: string): Promise<Record<string, unknown> | null> {
    try {
      const found = (await engineCall(`inspectContainer ${ref}`, () => this.docker.getContainer(ref).inspect())) as unknown as {
        Config?: { Labels?: Record<string, string> };
      };
      return isManaged(found.Config?.Labels ?? undefined) ? (found as Record<string, unknown>) : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async restart(id: string): Promise<void> {
    await engineCall(`restartContainer ${id}`, () => this.docker.getContainer(id).restart({ t: 10 }));
  }

  async labelsOf(target: { serviceName?: string; containerId?: string }): Promise<Record<string, string> | null> {
    try {
      if (target.serviceName) {
        const service = (await engineCall(`inspectService ${target.serviceName}`, () => this.docker.getService(target.serviceName!).inspect())) as {
          Spec?: { Labels?: Record<string, string> };
        };
        const labels = service.Spec?.Labels ?? {};
        return isManaged(labels) ? labels : null;
      }
      const found = await this.inspect(target.containerId ?? '');
      return found ? ((found as { Config?: { Labels?: Record<string, string> } }).Config?.Labels ?? {}) : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async logs(target: { serviceName?: string; containerId?: string }, options: LogOptions): Promise<LogSource> {
    const query = { stdout: true, stderr: true, follow: true as const, tail: options.tail, since: options.sinceUnix, timestamps: false };
    if (target.serviceName) {
      const service = this.logDocker.getService(target.serviceName);
      const spec = (await service.inspect()) as { Spec?: { TaskTemplate?: { ContainerSpec?: { TTY?: boolean } } } };
      const stream = (await service.logs({ ...query, follow: options.follow } as never)) as unknown;
      return { stream: asReadable(stream), tty: spec.Spec?.TaskTemplate?.ContainerSpec?.TTY === true };
    }
    const container = this.logDocker.getContainer(target.containerId ?? '');
    const info = await container.inspect();
    const stream = (await container.logs({ ...query, follow: options.follow } as never)) as unknown;
    return { stream: asReadable(stream), tty: info.Config?.Tty === true };
  }
}

/** Without `follow` the engine's answer comes whole, as a Buffer: served as a stream all the same. */
function asReadable(value: unknown): Readable {
  if (Buffer.isBuffer(value)) return Readable.from([value]);
  return value as Readable;
}
