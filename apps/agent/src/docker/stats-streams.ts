/**
 * The engine's stats streams of Skiff's containers (reconcile/container-stats.ts's StatsStreams),
 * read straight from the engine's socket (engine-socket.ts): sampling metrics, on by default,
 * no longer loads dockerode into an idle agent.
 */
import type { IncomingMessage } from 'node:http';
import { MANAGED_LABEL } from './driver.js';
import { EngineSocket } from './engine-socket.js';

export interface ManagedContainerInfo {
  id: string;
  name: string;
  labels: Record<string, string>;
}

interface ContainerListItem {
  Id: string;
  Names?: string[];
  Labels?: Record<string, string> | null;
}

export class EngineStatsStreams {
  private readonly engine: EngineSocket;

  /** `timeoutMs`: longest silence on a request (a stats stream speaks every second). */
  constructor(socketPath: string, timeoutMs = 60_000) {
    this.engine = new EngineSocket({ socketPath, timeoutMs });
  }

  async listManaged(): Promise<ManagedContainerInfo[]> {
    const list = (await this.engine.listContainers({ filters: { label: [`${MANAGED_LABEL}=true`], status: ['running'] } })) as ContainerListItem[];
    return list.map((c) => ({ id: c.Id, name: (c.Names?.[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels ?? {} }));
  }

  /** One streaming stats call; only the newest complete line of each chunk is passed on, undecoded. */
  async open(id: string, onLine: (line: Buffer) => void, onEnd: () => void): Promise<() => void> {
    const stream: IncomingMessage = await this.engine.stream(`/containers/${encodeURIComponent(id)}/stats?stream=true`);
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
