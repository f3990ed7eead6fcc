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

  /** One streaming stats call; only the newest complete line of each chunk is passed on, undecoded. */
  async open(id: string, onLine: (line: Buffer) => void, onEnd: () => void): Promise<() => void> {
    const stream = (await this.docker.getContainer(id).stats({ stream: true })) as NodeJS.ReadableStream & { destroy(): void };
    // Chunks are kept as bytes: only the line a sampling round reads is ever decoded.
    let pending: Buffer | null = null;
    stream.on('data', (chunk: Buffer) => {
      const data = pending ? Buffer.concat([pending, chunk]) : chunk;
      const end = data.lastIndexOf(0x0a);
      if (end < 0) {
        pending = data;
        return;
      }
      const start = data.lastIndexOf(0x0a, end - 1) + 1;
      pending = end + 1 < data.length ? Buffer.from(data.subarray(end + 1)) : null;
      if (end > start) onLine(data.subarray(start, end));
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
