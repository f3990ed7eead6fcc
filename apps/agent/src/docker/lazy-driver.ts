/**
 * The Docker port as the agent's process uses it: the dockerode driver (dockerode-driver.ts)
 * is imported at the first call that needs it, so an agent that only waits for commands
 * never loads dockerode. What every start does (the engine's version, the services it
 * adopts) and what runs while it waits (the crash-loop watcher's services and tasks) goes
 * through EngineSocket instead. A test (lazy-load.int.test.ts) starts the
 * agent and checks that dockerode is not loaded.
 */
import type {
  ContainerInfo,
  ContainerSpec,
  ContainerState,
  CreateOrUpdateOptions,
  DockerDriver,
  LocalImage,
  NetworkInfo,
  PullOptions,
  ServiceChange,
  ServiceChangeResult,
  ServiceInfo,
  ServiceSpec,
  ServiceWriteResult,
  SwarmInfo,
  TaskInfo,
  VolumeInfo,
} from './driver.js';
import { serviceTasks, servicesByLabel } from './dockerode-services.js';
import { EngineSocket } from './engine-socket.js';

export interface LazyDockerDriverOptions {
  socketPath: string;
  /** Longest silence on one Engine API request. */
  requestTimeoutMs: number;
}

export class LazyDockerDriver implements DockerDriver {
  private readonly engine: EngineSocket;
  private driver: Promise<DockerDriver> | null = null;

  constructor(private readonly options: LazyDockerDriverOptions) {
    this.engine = new EngineSocket({ socketPath: options.socketPath, timeoutMs: options.requestTimeoutMs });
  }

  /** The engine's version (GET /version). */
  version(): Promise<{ Version?: string }> {
    return this.engine.version();
  }

  servicesByLabel(labels: Record<string, string>): Promise<ServiceInfo[]> {
    return servicesByLabel(this.engine, labels);
  }

  /** Over the socket too: the crash-loop watcher reads every application's tasks every few seconds. */
  serviceTasks(name: string): Promise<TaskInfo[]> {
    return serviceTasks(this.engine, name);
  }

  private full(): Promise<DockerDriver> {
    this.driver ??= import('./dockerode-driver.js').then(
      ({ DockerodeDriver }) => new DockerodeDriver({ socketPath: this.options.socketPath, requestTimeoutMs: this.options.requestTimeoutMs }),
      (err: unknown) => {
        this.driver = null;
        throw err;
      },
    );
    return this.driver;
  }

  ensureSwarm(): Promise<SwarmInfo> {
    return this.full().then((d) => d.ensureSwarm());
  }

  createOrUpdateService(spec: ServiceSpec, options?: CreateOrUpdateOptions): Promise<ServiceWriteResult> {
    return this.full().then((d) => d.createOrUpdateService(spec, options));
  }

  updateService(name: string, change: ServiceChange): Promise<ServiceChangeResult | null> {
    return this.full().then((d) => d.updateService(name, change));
  }

  rollbackService(name: string): Promise<'rolled-back' | 'no-previous-version' | 'missing'> {
    return this.full().then((d) => d.rollbackService(name));
  }

  containerLogTail(containerId: string, lines: number): Promise<string[]> {
    return this.full().then((d) => d.containerLogTail(containerId, lines));
  }

  removeService(name: string): Promise<boolean> {
    return this.full().then((d) => d.removeService(name));
  }

  imageExists(ref: string): Promise<boolean> {
    return this.full().then((d) => d.imageExists(ref));
  }

  pullImage(ref: string, options?: PullOptions): Promise<void> {
    return this.full().then((d) => d.pullImage(ref, options));
  }

  pushImage(source: string, target: string, options?: PullOptions): Promise<string> {
    return this.full().then((d) => d.pushImage(source, target, options));
  }

  imagesByLabel(labels: Record<string, string>): Promise<LocalImage[]> {
    return this.full().then((d) => d.imagesByLabel(labels));
  }

  removeImageTag(tag: string): Promise<boolean> {
    return this.full().then((d) => d.removeImageTag(tag));
  }

  ensureNetwork(name: string): Promise<NetworkInfo> {
    return this.full().then((d) => d.ensureNetwork(name));
  }

  ensureVolume(name: string, labels?: Record<string, string>): Promise<VolumeInfo> {
    return this.full().then((d) => d.ensureVolume(name, labels));
  }

  ensureSecret(name: string, data: string, labels?: Record<string, string>): Promise<string> {
    return this.full().then((d) => d.ensureSecret(name, data, labels));
  }

  volumesByLabel(labels: Record<string, string>): Promise<string[]> {
    return this.full().then((d) => d.volumesByLabel(labels));
  }

  removeVolume(name: string): Promise<boolean> {
    return this.full().then((d) => d.removeVolume(name));
  }

  containerByName(name: string): Promise<ContainerInfo | null> {
    return this.full().then((d) => d.containerByName(name));
  }

  createContainer(spec: ContainerSpec): Promise<ContainerInfo> {
    return this.full().then((d) => d.createContainer(spec));
  }

  startContainer(name: string): Promise<void> {
    return this.full().then((d) => d.startContainer(name));
  }

  removeContainer(name: string): Promise<boolean> {
    return this.full().then((d) => d.removeContainer(name));
  }

  containersByLabel(labels: Record<string, string>): Promise<Array<{ id: string; state: ContainerState }>> {
    return this.full().then((d) => d.containersByLabel(labels));
  }
}
