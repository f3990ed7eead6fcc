/**
 * What a host cleanup (control/host-cleanup.ts) reads from and removes on the Docker Engine:
 * summaries of containers, images, volumes and Skiff's services, one object removed at a
 * time, never forced (an object the engine says is in use stays). The choice of what goes is
 * not made here.
 */
import { Writable } from 'node:stream';
import type Dockerode from 'dockerode';
import { MANAGED_LABEL } from './driver.js';
import { engineCall, isNotFound } from './engine.js';
import { DockerConflictError } from './errors.js';

export interface EngineContainer {
  id: string;
  name: string;
  state: string;
  imageId: string;
  labels: Record<string, string>;
  /** Bytes of its writable layer. */
  size: number;
}

export interface EngineImage {
  id: string;
  tags: string[];
  digests: string[];
  labels: Record<string, string>;
  created: number;
  size: number;
}

export interface EngineVolume {
  name: string;
  labels: Record<string, string>;
  /** Bytes, when the engine measured it; 0 otherwise. */
  size: number;
}

/** The images and volume names Skiff's services use, in their current and previous specs. */
export interface ServiceUsage {
  images: string[];
  volumes: string[];
}

export interface CleanupEngine {
  containers(): Promise<EngineContainer[]>;
  images(): Promise<EngineImage[]>;
  /** Volumes no container (running or not) uses. */
  unusedVolumes(): Promise<EngineVolume[]>;
  serviceUsage(): Promise<ServiceUsage>;
  /** The image id a reference names here, or null. */
  imageId(ref: string): Promise<string | null>;
  /** Each remove answers false when the object is gone or the engine refuses (in use). */
  removeContainer(id: string): Promise<boolean>;
  removeImage(id: string): Promise<boolean>;
  removeVolume(name: string): Promise<boolean>;
  /** Removes the build cache no build uses; answers the bytes freed. */
  pruneBuildCache(): Promise<number>;
  /** Runs `argv` (no shell) in a running container; answers its exit code and output (the first MiB). */
  execIn(containerId: string, argv: string[]): Promise<{ exitCode: number; output: string }>;
}

type SpecWithImage = {
  TaskTemplate?: { ContainerSpec?: { Image?: string; Mounts?: Array<{ Type?: string; Source?: string }> } };
};

export class DockerodeCleanupEngine implements CleanupEngine {
  constructor(private readonly docker: Dockerode) {}

  async containers(): Promise<EngineContainer[]> {
    const list = await engineCall('list containers', () => this.docker.listContainers({ all: true, size: true }));
    return list.map((c) => ({
      id: c.Id,
      name: (c.Names?.[0] ?? c.Id).replace(/^\//, ''),
      state: c.State,
      imageId: c.ImageID,
      labels: c.Labels ?? {},
      size: (c as { SizeRw?: number }).SizeRw ?? 0,
    }));
  }

  async images(): Promise<EngineImage[]> {
    const list = await engineCall('list images', () => this.docker.listImages({ all: false }));
    return list.map((i) => ({
      id: i.Id,
      tags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'),
      digests: (i.RepoDigests ?? []).filter((d) => !d.startsWith('<none>')),
      labels: i.Labels ?? {},
      created: i.Created,
      size: i.Size,
    }));
  }

  async unusedVolumes(): Promise<EngineVolume[]> {
    const listed = await engineCall('list volumes', () => this.docker.listVolumes({ filters: { dangling: ['true'] } }));
    const volumes = listed.Volumes ?? [];
    if (volumes.length === 0) return [];
    // Sizes come from the engine's disk usage report (the volume list does not carry them).
    const sizes = new Map<string, number>();
    try {
      const df = (await this.docker.df()) as { Volumes?: Array<{ Name: string; UsageData?: { Size?: number } }> };
      for (const v of df.Volumes ?? []) sizes.set(v.Name, Math.max(0, v.UsageData?.Size ?? 0));
    } catch {
      // Without sizes the cleanup still runs; it reports 0 bytes for them.
    }
    return volumes.map((v) => ({ name: v.Name, labels: v.Labels ?? {}, size: sizes.get(v.Name) ?? 0 }));
  }

  async serviceUsage(): Promise<ServiceUsage> {
    let services: Array<{ Spec?: SpecWithImage; PreviousSpec?: SpecWithImage }>;
    try {
      services = (await this.docker.listServices({ filters: { label: [`${MANAGED_LABEL}=true`] } })) as typeof services;
    } catch (err) {
      // Not a swarm manager: no services to protect.
      if ((err as { statusCode?: number }).statusCode === 503) return { images: [], volumes: [] };
      throw err;
    }
    const images = new Set<string>();
    const volumes = new Set<string>();
    for (const service of services) {
      for (const spec of [service.Spec, service.PreviousSpec]) {
        const container = spec?.TaskTemplate?.ContainerSpec;
        if (container?.Image) images.add(container.Image);
        for (const mount of container?.Mounts ?? []) if (mount.Type === 'volume' && mount.Source) volumes.add(mount.Source);
      }
    }
    return { images: [...images], volumes: [...volumes] };
  }

  async imageId(ref: string): Promise<string | null> {
    try {
      return (await engineCall(`inspect image ${ref}`, () => this.docker.getImage(ref).inspect())).Id;
    } catch (err) {
      if (isNotFound(err) || (err as { statusCode?: number }).statusCode === 400) return null;
      throw err;
    }
  }

  removeContainer(id: string): Promise<boolean> {
    return removed(`remove container ${id}`, () => this.docker.getContainer(id).remove({ v: false }));
  }

  removeImage(id: string): Promise<boolean> {
    return removed(`remove image ${id}`, () => this.docker.getImage(id).remove({ force: false }));
  }

  removeVolume(name: string): Promise<boolean> {
    return removed(`remove volume ${name}`, () => this.docker.getVolume(name).remove());
  }

  execIn(containerId: string, argv: string[]): Promise<{ exitCode: number; output: string }> {
    return execIn(this.docker, containerId, argv);
  }

  async pruneBuildCache(): Promise<number> {
    const answer = (await engineCall('prune build cache', () => this.docker.pruneBuilder())) as { SpaceReclaimed?: number };
    return answer.SpaceReclaimed ?? 0;
  }
}

const EXEC_OUTPUT_LIMIT = 1024 * 1024;
const EXEC_TIMEOUT_MS = 10 * 60_000;

async function execIn(docker: Dockerode, containerId: string, argv: string[]): Promise<{ exitCode: number; output: string }> {
  const operation = `exec ${argv[0] ?? ''} in ${containerId}`;
  const exec = await engineCall(operation, () => docker.getContainer(containerId).exec({ Cmd: argv, AttachStdout: true, AttachStderr: true }));
  const stream = await engineCall(operation, () => exec.start({ hijack: true, stdin: false }));
  let output = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (output.length < EXEC_OUTPUT_LIMIT) output += chunk.toString();
      done();
    },
  });
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`${operation}: no end within ${EXEC_TIMEOUT_MS / 1000} s`));
    }, EXEC_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    stream.on('end', done);
    stream.on('close', done);
    stream.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  const inspected = await engineCall(operation, () => exec.inspect());
  return { exitCode: inspected.ExitCode ?? -1, output: output.slice(0, EXEC_OUTPUT_LIMIT) };
}

async function removed(operation: string, run: () => Promise<unknown>): Promise<boolean> {
  try {
    await engineCall(operation, run);
    return true;
  } catch (err) {
    if (isNotFound(err) || err instanceof DockerConflictError) return false;
    throw err;
  }
}
