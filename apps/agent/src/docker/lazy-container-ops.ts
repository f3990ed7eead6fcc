/**
 * The ContainerOps the process uses: dockerode loads with the first container.* request or
 * log stream, not at start (an idle agent holds only what waiting needs).
 */
import type { ContainerOps, ContainerSummary, LogOptions, LogSource } from './container-ops.js';

export class LazyContainerOps implements ContainerOps {
  private ops: Promise<ContainerOps> | null = null;

  constructor(private readonly options: { socketPath: string; requestTimeoutMs: number }) {}

  private load(): Promise<ContainerOps> {
    this.ops ??= Promise.all([import('dockerode'), import('./container-ops.js')]).then(
      ([{ default: Dockerode }, { DockerodeContainerOps }]) =>
        // Log streams read without the request timeout, which would cut a quiet followed log.
        new DockerodeContainerOps(new Dockerode({ socketPath: this.options.socketPath, timeout: this.options.requestTimeoutMs }), new Dockerode({ socketPath: this.options.socketPath })),
      (err: unknown) => {
        this.ops = null;
        throw err;
      },
    );
    return this.ops;
  }

  list(): Promise<ContainerSummary[]> {
    return this.load().then((o) => o.list());
  }

  inspect(ref: string): Promise<Record<string, unknown> | null> {
    return this.load().then((o) => o.inspect(ref));
  }

  restart(id: string): Promise<void> {
    return this.load().then((o) => o.restart(id));
  }

  labelsOf(target: { serviceName?: string; containerId?: string }): Promise<Record<string, string> | null> {
    return this.load().then((o) => o.labelsOf(target));
  }

  logs(target: { serviceName?: string; containerId?: string }, options: LogOptions): Promise<LogSource> {
    return this.load().then((o) => o.logs(target, options));
  }
}
