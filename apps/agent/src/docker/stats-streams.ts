/**
 * The engine's stats streams of Skiff's containers (reconcile/container-stats.ts's StatsStreams):
 * one streaming call per container on the engine's socket (stats-socket.ts), which rest
 * between sampling rounds.
 */
import type Dockerode from 'dockerode';
import { MANAGED_LABEL } from './driver.js';
import { openStatsSocket, type StatsSocket } from './stats-socket.js';

export interface ManagedContainerInfo {
  id: string;
  name: string;
  labels: Record<string, string>;
}

export class DockerodeStatsStreams {
  private readonly sockets = new Set<StatsSocket>();
  private resting = false;
  private readonly socketPath: string;
  private readonly readBuffer = Buffer.allocUnsafe(64 * 1024);

  constructor(private readonly docker: Dockerode, socketPath?: string) {
    const path = socketPath ?? (docker.modem as { socketPath?: string }).socketPath;
    if (!path) throw new Error('container stats are read on the engine\'s unix socket: the client has none');
    this.socketPath = path;
  }

  async listManaged(): Promise<ManagedContainerInfo[]> {
    const list = await this.docker.listContainers({ filters: { label: [`${MANAGED_LABEL}=true`], status: ['running'] } });
    return list.map((c) => ({ id: c.Id, name: (c.Names[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels ?? {} }));
  }

  /** One streaming stats call; only the newest complete line of each read is passed on, undecoded. */
  async open(id: string, onLine: (line: Buffer) => void, onEnd: () => void): Promise<() => void> {
    let socket: StatsSocket | null = null;
    socket = await openStatsSocket({ socketPath: this.socketPath, readBuffer: this.readBuffer }, id, onLine, () => {
      if (socket) this.sockets.delete(socket);
      onEnd();
    });
    this.sockets.add(socket);
    if (this.resting) socket.pause();
    const opened = socket;
    return () => {
      this.sockets.delete(opened);
      opened.close();
    };
  }

  /** Stops reading every stream until `wake` (the engine's lines wait in the sockets). */
  async rest(): Promise<void> {
    this.resting = true;
    for (const s of this.sockets) s.pause();
  }

  async wake(): Promise<void> {
    this.resting = false;
    for (const s of this.sockets) s.resume();
  }
}
