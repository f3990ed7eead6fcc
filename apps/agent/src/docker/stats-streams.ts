/**
 * The engine's stats streams of Skiff's containers (reconcile/container-stats.ts's StatsStreams):
 * the list through the engine's socket (engine-socket.ts), one streaming call per container on
 * it (stats-socket.ts), which rest between sampling rounds. Sampling, on by default, does not
 * load dockerode into an idle agent.
 */
import { MANAGED_LABEL } from './driver.js';
import { EngineSocket } from './engine-socket.js';
import { openStatsSocket, type StatsSocket } from './stats-socket.js';

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
  private readonly sockets = new Set<StatsSocket>();
  private resting = false;
  private readonly readBuffer = Buffer.allocUnsafe(64 * 1024);

  /** `timeoutMs`: longest wait for the container list. */
  constructor(private readonly socketPath: string, timeoutMs = 60_000) {
    this.engine = new EngineSocket({ socketPath, timeoutMs });
  }

  async listManaged(): Promise<ManagedContainerInfo[]> {
    const list = (await this.engine.listContainers({ filters: { label: [`${MANAGED_LABEL}=true`], status: ['running'] } })) as ContainerListItem[];
    return list.map((c) => ({ id: c.Id, name: (c.Names?.[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels ?? {} }));
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
