/**
 * Images the agent built for an application (`<appName>:<deploymentId>`, labelled with the
 * workload): every deploy adds one, so without pruning a server's disk fills with them.
 * After a deploy built and rolled out, only what the service runs and what a rollback
 * returns to (the spec before the last update) stay; after the application's removal, none.
 * An image a container still uses is left (the engine refuses), and a failure to prune
 * never fails the command: it is logged and the next deploy tries again.
 */
import type { Logger } from 'pino';
import { MANAGED_LABEL, type DockerDriver } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';

export const builtImageLabels = (workloadId: string) => ({ [MANAGED_LABEL]: 'true', 'skiff.kind': 'application', 'skiff.id': workloadId });

/** Removes the workload's built image tags not in `keep`; answers the tags removed. */
export async function pruneBuiltImages(
  driver: Pick<DockerDriver, 'imagesByLabel' | 'removeImageTag'>,
  workloadId: string,
  keep: ReadonlyArray<string | null | undefined>,
  log: Logger,
): Promise<string[]> {
  // A service's image may carry the digest the engine resolved: `name:tag@sha256:…`.
  const kept = new Set(keep.flatMap((ref) => (ref ? [ref.split('@')[0]!] : [])));
  const removed: string[] = [];
  try {
    for (const image of await driver.imagesByLabel(builtImageLabels(workloadId))) {
      for (const tag of image.tags) {
        if (kept.has(tag)) continue;
        try {
          if (await driver.removeImageTag(tag)) removed.push(tag);
        } catch (err) {
          if (!(err instanceof DockerError)) throw err;
          log.debug({ image: tag, err: err.message }, 'built image left in place');
        }
      }
    }
  } catch (err) {
    if (!(err instanceof DockerError)) throw err;
    log.warn({ err: err.message, workloadId }, 'could not list the built images to prune');
  }
  if (removed.length > 0) log.info({ images: removed }, 'removed built images no longer used');
  return removed;
}
