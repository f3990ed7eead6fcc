/** The engine's stats streams of Skiff's containers (reconcile/container-stats.ts's StatsStreams). */
import type Dockerode from 'dockerode';
import { MANAGED_LABEL } from './driver.js';

export interface ManagedContainerInfo {
  id: string;
  name: string;
  labels: Record<string, string>;
}

export class DockerodeStatsStreams {
  constructor(private readonly docker: Dockerode) {}

  async listManaged(): Promise<ManagedContainerInfo[]> {
    const list = await this.docker.listContainers({ filters: { label: [`${MANAGED_LABEL}=true`], status: ['running'] } });
    return list.map((c) => ({ id: c.Id, name: (c.Names[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels ?? {} }));
  }

  /** One streaming stats call; only the newest complete line of each chunk is passed on. */
  async open(id: string, onLine: (line: string) => void, onEnd: () => void): Promise<() => void> {
    const stream = (await this.docker.getContainer(id).stats({ stream: true })) as NodeJS.ReadableStream & { destroy(): void };
    let pending = '';
    stream.on('data', (chunk: Buffer | string) => {
      pending += chunk.toString();
      const end = pending.lastIndexOf('\n');
      if (end < 0) return;
      const complete = pending.slice(0, end);
      pending = pending.slice(end + 1);
      const line = complete.slice(complete.lastIndexOf('\n') + 1);
      if (line.trim() !== '') onLine(line);
    });
    let ended = false;
    const finish = () => {
      if (ended) return;
      ended = true;
      onEnd();
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
    return () => stream.destroy();
  }
}
