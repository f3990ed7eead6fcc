/**
 * Answers a HostCleanup (proto ControlRequest.host_cleanup, the settings.clean* operations):
 * cleans this server's Docker Engine without ever losing data or a rollback.
 *
 * - It runs while no build or deploy does: it waits for the running ones (the scheduler's
 *   slots, `withSlotsHeld`) and none starts until it ends.
 * - Stopped containers: those a Skiff workload keeps stopped (labelled skiff.managed and not
 *   a swarm task) stay.
 * - Images: never one a container uses, one a Skiff service's current or previous spec names
 *   (a rollback goes back to it), one the control plane lists, nor the newest
 *   `keepBuiltPerWorkload` images built for each workload (label skiff.id).
 * - Volumes only when asked, and never one a Skiff workload names (see the proto).
 * - The server registry (registry-gc.ts) with the images: its tags of images gone from here.
 * - `only_label` confines it to objects with that label (tests on a shared engine).
 */
import type { ControlReply, HostCleanup, HostCleanupReply } from '@skiff/proto';
import type { Logger } from 'pino';
import type { CleanupEngine, EngineContainer, EngineImage, EngineVolume, ServiceUsage } from '../docker/dockerode-cleanup.js';
import { MANAGED_LABEL } from '../docker/driver.js';
import { type CommandScheduler, SlotsBusyError } from '../pipeline/scheduler.js';
import { collectRegistry } from './registry-gc.js';

const STOPPED = new Set(['exited', 'created', 'dead']);
const SWARM_TASK_LABEL = 'com.docker.swarm.task.id';
const STACK_LABEL = 'com.docker.stack.namespace';
const COMPOSE_PROJECT_LABEL = 'com.docker.compose.project';
const DEFAULT_WAIT_MS = 10 * 60_000;

export interface HostCleanupDeps {
  engine: CleanupEngine;
  slots: Pick<CommandScheduler, 'withSlotsHeld'>;
  log: Logger;
  /** Images built for one workload (label skiff.id) kept, newest first, for rollbacks; default 2. */
  keepBuiltPerWorkload?: number;
}

type Matcher = (labels: Record<string, string>) => boolean;

export class HostCleanupControl {
  private readonly log: Logger;

  constructor(private readonly deps: HostCleanupDeps) {
    this.log = deps.log.child({ component: 'host-cleanup' });
  }

  async handle(request: HostCleanup): Promise<ControlReply> {
    const matches = labelMatcher(request.onlyLabel);
    if (!matches) return refused('only_label must be key=value');
    const waitMs = request.waitTimeoutMs || DEFAULT_WAIT_MS;
    try {
      const { waitedMs, result } = await this.deps.slots.withSlotsHeld(() => this.clean(request, matches), waitMs);
      const reply: HostCleanupReply = { ...result, spaceFreed: String(result.spaceFreed), waitedMs };
      this.log.info(
        {
          containers: reply.removedContainers.length,
          images: reply.removedImages.length,
          volumes: reply.removedVolumes.length,
          spaceFreed: result.spaceFreed,
          waitedMs,
        },
        'host cleanup done',
      );
      return { commandIds: [], error: '', hostCleanup: reply };
    } catch (err) {
      if (err instanceof SlotsBusyError) return refused(`nothing was cleaned: ${err.message}`);
      this.log.error({ err }, 'host cleanup failed');
      return refused(`the cleanup failed: ${(err as Error).message}`);
    }
  }

  private async clean(request: HostCleanup, matches: Matcher): Promise<Omit<HostCleanupReply, 'waitedMs' | 'spaceFreed'> & { spaceFreed: number }> {
    const { engine } = this.deps;
    const out = { removedContainers: [] as string[], removedImages: [] as string[], removedVolumes: [] as string[], spaceFreed: 0 };
    let usage: ServiceUsage | null = null;
    const serviceUsage = async () => (usage ??= await engine.serviceUsage());

    if (request.stoppedContainers) {
      for (const c of await engine.containers()) {
        if (!STOPPED.has(c.state) || !matches(c.labels) || isStoppedWorkload(c)) continue;
        if (await engine.removeContainer(c.id)) {
          out.removedContainers.push(c.name);
          out.spaceFreed += c.size;
        }
      }
    }
    if (request.images || request.danglingImages) {
      const inUse = new Set((await engine.containers()).map((c) => c.imageId));
      const kept = await this.keptImages([...(await serviceUsage()).images, ...request.keepImages]);
      const images = await engine.images();
      const rollback = newestBuilt(images, this.deps.keepBuiltPerWorkload ?? 2);
      for (const image of images) {
        if (!matches(image.labels) || inUse.has(image.id) || rollback.has(image.id)) continue;
        if (!request.images && image.tags.length > 0) continue;
        if (kept.ids.has(image.id) || kept.refs.some((ref) => namesImage(ref, image))) continue;
        if (await engine.removeImage(image.id)) {
          out.removedImages.push(image.id);
          out.spaceFreed += image.size;
        }
      }
      // The server registry's tags follow the images left here; a confined run leaves it alone.
      if (request.images && !request.onlyLabel) {
        try {
          const collected = await collectRegistry(engine, await engine.images(), [...(await serviceUsage()).images, ...request.keepImages]);
          out.removedImages.push(...collected.removedTags);
          out.spaceFreed += collected.spaceFreed;
        } catch (err) {
          this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'the server registry was not collected');
        }
      }
    }
    // The build cache carries no labels: a run confined to a label leaves it alone.
    if (request.buildCache && !request.onlyLabel) out.spaceFreed += await engine.pruneBuildCache();
    if (request.volumes) {
      const named = new Set([...request.keepVolumeNames, ...(await serviceUsage()).volumes]);
      for (const volume of await engine.unusedVolumes()) {
        if (!matches(volume.labels) || isWorkloadVolume(volume, named, request.keepAppNames)) continue;
        if (await engine.removeVolume(volume.name)) {
          out.removedVolumes.push(volume.name);
          out.spaceFreed += volume.size;
        }
      }
    }
    return out;
  }

  /** The image ids the references resolve to here, and the references themselves (digest-pinned ones may not resolve). */
  private async keptImages(refs: string[]): Promise<{ ids: Set<string>; refs: string[] }> {
    const ids = new Set<string>();
    for (const ref of new Set(refs)) {
      const id = await this.deps.engine.imageId(ref.split('@')[0]);
      if (id) ids.add(id);
    }
    return { ids, refs };
  }
}

/** A container a Skiff workload keeps while stopped (not a swarm task, whose history the swarm keeps). */
export const isStoppedWorkload = (c: EngineContainer) => c.labels[MANAGED_LABEL] === 'true' && !c.labels[SWARM_TASK_LABEL];

/** A volume a Skiff workload names, mounts or labels. */
export function isWorkloadVolume(volume: EngineVolume, named: Set<string>, appNames: string[]): boolean {
  if (named.has(volume.name) || volume.labels[MANAGED_LABEL] === 'true') return true;
  const owners = [volume.labels[STACK_LABEL], volume.labels[COMPOSE_PROJECT_LABEL]];
  return appNames.some(
    (app) => app !== '' && (volume.name === app || volume.name.startsWith(`${app}_`) || volume.name.startsWith(`${app}-`) || owners.includes(app)),
  );
}

/** Whether `ref` (`name[:tag][@digest]`, or an id) names this image. */
export function namesImage(ref: string, image: EngineImage): boolean {
  const [name, digest] = ref.split('@');
  if (ref === image.id || name === image.id) return true;
  // A tag is what follows the last `:` after the last `/` (a registry's port comes before one).
  const colon = name.lastIndexOf(':');
  const hasTag = colon > name.lastIndexOf('/');
  const tagged = hasTag ? name : `${name}:latest`;
  if (image.tags.includes(tagged) || image.tags.includes(name)) return true;
  if (!digest) return false;
  const repo = hasTag ? name.slice(0, colon) : name;
  return image.digests.includes(`${repo}@${digest}`);
}

/** The newest `keep` images built for each workload (label skiff.id). */
function newestBuilt(images: EngineImage[], keep: number): Set<string> {
  const byWorkload = new Map<string, EngineImage[]>();
  for (const image of images) {
    const id = image.labels['skiff.id'];
    if (!id || image.labels[MANAGED_LABEL] !== 'true') continue;
    byWorkload.set(id, [...(byWorkload.get(id) ?? []), image]);
  }
  const kept = new Set<string>();
  for (const list of byWorkload.values()) {
    for (const image of list.sort((a, b) => b.created - a.created).slice(0, keep)) kept.add(image.id);
  }
  return kept;
}

function labelMatcher(onlyLabel: string): Matcher | null {
  if (onlyLabel === '') return () => true;
  const at = onlyLabel.indexOf('=');
  if (at <= 0) return null;
  const key = onlyLabel.slice(0, at);
  const value = onlyLabel.slice(at + 1);
  return (labels) => labels[key] === value;
}

function refused(error: string): ControlReply {
  return { commandIds: [], error };
}
