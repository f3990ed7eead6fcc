/**
 * The CleanupEngine the process uses: dockerode and the cleanup code load with the first
 * cleanup (settings.clean*), not at start (an idle agent holds only what waiting needs).
 */
import type { CleanupEngine, EngineContainer, EngineImage, EngineVolume, ServiceUsage } from './dockerode-cleanup.js';

export class LazyCleanupEngine implements CleanupEngine {
  private engine: Promise<CleanupEngine> | null = null;

  constructor(private readonly options: { socketPath: string; requestTimeoutMs: number }) {}

  private load(): Promise<CleanupEngine> {
    this.engine ??= Promise.all([import('dockerode'), import('./dockerode-cleanup.js')]).then(
      ([{ default: Dockerode }, { DockerodeCleanupEngine }]) =>
        new DockerodeCleanupEngine(new Dockerode({ socketPath: this.options.socketPath, timeout: this.options.requestTimeoutMs })),
      (err: unknown) => {
        this.engine = null;
        throw err;
      },
    );
    return this.engine;
  }

  containers(): Promise<EngineContainer[]> {
    return this.load().then((e) => e.containers());
  }

  images(): Promise<EngineImage[]> {
    return this.load().then((e) => e.images());
  }

  unusedVolumes(): Promise<EngineVolume[]> {
    return this.load().then((e) => e.unusedVolumes());
  }

  serviceUsage(): Promise<ServiceUsage> {
    return this.load().then((e) => e.serviceUsage());
  }

  imageId(ref: string): Promise<string | null> {
    return this.load().then((e) => e.imageId(ref));
  }

  removeContainer(id: string): Promise<boolean> {
    return this.load().then((e) => e.removeContainer(id));
  }

  removeImage(id: string): Promise<boolean> {
    return this.load().then((e) => e.removeImage(id));
  }

  removeVolume(name: string): Promise<boolean> {
    return this.load().then((e) => e.removeVolume(name));
  }

  pruneBuildCache(): Promise<number> {
    return this.load().then((e) => e.pruneBuildCache());
  }
}
