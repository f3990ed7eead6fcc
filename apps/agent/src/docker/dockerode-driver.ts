/**
 * The Docker port implemented with dockerode against the Engine API. No API version is
 * pinned: requests go to the unversioned paths, which the engine serves at its own version
 * (1.41 for Engine 20.10), so the driver works with the engine it finds.
 *
 * Nothing here builds a command line: every call is an Engine API request, and every name
 * that goes into a request path is checked against Docker's grammar first (engine.ts). The
 * calls live by concern: the swarm and its services (dockerode-services.ts), images
 * (dockerode-images.ts), networks and volumes (dockerode-networks-volumes.ts), plain
 * containers (dockerode-containers.ts); registry credentials: registry-auth.ts.
 */
import Dockerode from 'dockerode';
import { containerLogTail } from './container-log-tail.js';
import * as containers from './dockerode-containers.js';
import * as images from './dockerode-images.js';
import { pushImage } from './image-push.js';
import * as networksVolumes from './dockerode-networks-volumes.js';
import * as services from './dockerode-services.js';
import { ensureSecret } from './dockerode-secrets.js';
import type {
  ContainerInfo,
  ContainerSpec,
  ContainerState,
  LocalImage,
  CreateOrUpdateOptions,
  DockerDriver,
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

export interface DockerodeDriverOptions {
  /** A configured client; otherwise one is made for `socketPath`. */
  docker?: Dockerode;
  /** Default `/var/run/docker.sock`. */
  socketPath?: string;
  /** Idle timeout of one Engine API request, for a client made here. Default 60 s. */
  requestTimeoutMs?: number;
  /** Used when the driver initialises a swarm. Defaults: `0.0.0.0:2377`, advertise address chosen by the engine. */
  swarm?: { listenAddr?: string; advertiseAddr?: string };
}

export class DockerodeDriver implements DockerDriver {
  private readonly docker: Dockerode;
  private readonly swarmOptions: services.SwarmInitOptions;

  constructor(options: DockerodeDriverOptions = {}) {
    this.docker =
      options.docker ??
      new Dockerode({
        socketPath: options.socketPath ?? '/var/run/docker.sock',
        timeout: options.requestTimeoutMs ?? 60_000,
      });
    this.swarmOptions = {
      listenAddr: options.swarm?.listenAddr ?? '0.0.0.0:2377',
      ...(options.swarm?.advertiseAddr ? { advertiseAddr: options.swarm.advertiseAddr } : {}),
    };
  }

  ensureSwarm(): Promise<SwarmInfo> {
    return services.ensureSwarm(this.docker, this.swarmOptions);
  }

  createOrUpdateService(spec: ServiceSpec, options?: CreateOrUpdateOptions): Promise<ServiceWriteResult> {
    return services.createOrUpdateService(this.docker, spec, options);
  }

  updateService(name: string, change: ServiceChange): Promise<ServiceChangeResult | null> {
    return services.updateService(this.docker, name, change);
  }

  rollbackService(name: string): Promise<'rolled-back' | 'no-previous-version' | 'missing'> {
    return services.rollbackService(this.docker, name);
  }

  removeService(name: string): Promise<boolean> {
    return services.removeService(this.docker, name);
  }

  serviceTasks(name: string): Promise<TaskInfo[]> {
    return services.serviceTasks(services.dockerodeTaskReader(this.docker), name);
  }

  servicesByLabel(labels: Record<string, string>): Promise<ServiceInfo[]> {
    return services.servicesByLabel(this.docker, labels);
  }

  imageExists(ref: string): Promise<boolean> {
    return images.imageExists(this.docker, ref);
  }

  pullImage(ref: string, options?: PullOptions): Promise<void> {
    return images.pullImage(this.docker, ref, options);
  }

  pushImage(source: string, target: string, options?: PullOptions): Promise<string> {
    return pushImage(this.docker, source, target, options);
  }

  imagesByLabel(labels: Record<string, string>): Promise<LocalImage[]> {
    return images.imagesByLabel(this.docker, labels);
  }

  removeImageTag(tag: string): Promise<boolean> {
    return images.removeImageTag(this.docker, tag);
  }

  ensureNetwork(name: string): Promise<NetworkInfo> {
    return networksVolumes.ensureNetwork(this.docker, name);
  }

  ensureVolume(name: string, labels?: Record<string, string>): Promise<VolumeInfo> {
    return networksVolumes.ensureVolume(this.docker, name, labels);
  }

  volumesByLabel(labels: Record<string, string>): Promise<string[]> {
    return networksVolumes.volumesByLabel(this.docker, labels);
  }

  ensureSecret(name: string, data: string, labels?: Record<string, string>): Promise<string> {
    return ensureSecret(this.docker, name, data, labels);
  }

  removeVolume(name: string): Promise<boolean> {
    return networksVolumes.removeVolume(this.docker, name);
  }

  containerByName(name: string): Promise<ContainerInfo | null> {
    return containers.containerByName(this.docker, name);
  }

  createContainer(spec: ContainerSpec): Promise<ContainerInfo> {
    return containers.createContainer(this.docker, spec);
  }

  startContainer(name: string): Promise<void> {
    return containers.startContainer(this.docker, name);
  }

  removeContainer(name: string): Promise<boolean> {
    return containers.removeContainer(this.docker, name);
  }

  containersByLabel(labels: Record<string, string>): Promise<Array<{ id: string; state: ContainerState }>> {
    return containers.containersByLabel(this.docker, labels);
  }

  containerLogTail(containerId: string, lines: number): Promise<string[]> {
    return containerLogTail(this.docker, containerId, lines);
  }
}
