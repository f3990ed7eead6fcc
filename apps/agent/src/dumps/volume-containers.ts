/**
 * Throw-away containers for volume backups and restores: a local image's container that
 * mounts one named volume at /volume (read-only for a backup) and sleeps, so the archive
 * tool runs in it through docker exec (database-containers.ts); removed, with nothing else,
 * when the command ends. The image is never pulled: it must be on the server.
 */
import type Dockerode from 'dockerode';
import { checkObjectName, engineCall, isNotFound } from '../docker/engine.js';
import { removeThrowaway, startThrowaway } from './throwaway-containers.js';
import { OWNER_LABEL, VOLUME_TOOL_LABEL, volumeToolName } from './throwaway-leftovers.js';
import { VOLUME_PATH } from './tool-commands.js';

/** A small image with tar and sh, present on every server Skiff's tools set up. */
export const VOLUME_TOOL_IMAGE = 'busybox:latest';

/** tar needs little: a crafted archive must not take the server's memory, CPU or process table. */
export const VOLUME_TOOL_LIMITS = { Memory: 256 * 1024 ** 2, MemorySwap: 256 * 1024 ** 2, NanoCpus: 1_000_000_000, PidsLimit: 64 } as const;

export interface VolumeContainers {
  /** The named volume's labels, or null when it does not exist. */
  labels(volume: string): Promise<Record<string, string> | null>;
  /** Makes the named local volume with these labels. */
  create(volume: string, labels: Record<string, string>): Promise<void>;
  /** The names of the running containers that mount the volume. */
  mountedBy(volume: string): Promise<string[]>;
  /** Starts command `commandId`'s throw-away container mounting the volume at VOLUME_PATH (replacing one a run left); answers its id. */
  start(volume: string, readOnly: boolean, commandId: string): Promise<string>;
  remove(containerId: string): Promise<void>;
}

export class DockerodeVolumeContainers implements VolumeContainers {
  /** `owner`: the agent's server id, on its containers (OWNER_LABEL) so that its start removes only its own leftovers. */
  constructor(
    private readonly docker: Dockerode,
    private readonly options: { owner?: string; image?: string } = {},
  ) {}

  async labels(volume: string): Promise<Record<string, string> | null> {
    checkObjectName('volume', volume, 'inspect volume');
    try {
      const found = (await engineCall('inspect volume', () => this.docker.getVolume(volume).inspect())) as { Labels?: Record<string, string> | null };
      return found.Labels ?? {};
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async create(volume: string, labels: Record<string, string>): Promise<void> {
    checkObjectName('volume', volume, 'create volume');
    await engineCall('create volume', () => this.docker.createVolume({ Name: volume, Driver: 'local', Labels: labels }));
  }

  async mountedBy(volume: string): Promise<string[]> {
    checkObjectName('volume', volume, 'list containers');
    const found = await engineCall('list containers', () => this.docker.listContainers({ filters: { volume: [volume], status: ['running'] } }));
    return found.map((c) => (c.Names[0] ?? c.Id).replace(/^\//, ''));
  }

  async start(volume: string, readOnly: boolean, commandId: string): Promise<string> {
    checkObjectName('volume', volume, 'create container');
    const name = volumeToolName(commandId);
    await this.remove(name);
    return startThrowaway(this.docker, {
      name,
      Image: this.options.image ?? VOLUME_TOOL_IMAGE,
      Cmd: ['sleep', '86400'],
      Labels: { [VOLUME_TOOL_LABEL]: name, [OWNER_LABEL]: this.options.owner ?? '' },
      NetworkDisabled: true,
      HostConfig: { Mounts: [{ Type: 'volume', Source: volume, Target: VOLUME_PATH, ReadOnly: readOnly }], NetworkMode: 'none', ...VOLUME_TOOL_LIMITS },
    });
  }

  remove(containerId: string): Promise<void> {
    // The named volume stays; the container has no anonymous ones.
    return removeThrowaway(this.docker, containerId, false);
  }
}
