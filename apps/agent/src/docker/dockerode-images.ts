/**
 * Images, through dockerode: whether one is here, and its pull (with the registry
 * credentials when given, within a time limit). A failed pull reports the registry's own
 * reason, which the engine gives in its last progress event (pull-progress.ts).
 */
import type Dockerode from 'dockerode';
import { parseImageReference } from '@skiff/domain';
import type { LocalImage, PullOptions } from './driver.js';
import { checkImageRef, engineCall, isManaged, isNotFound, labelFilters } from './engine.js';
import { DockerConflictError, DockerError, toDockerError } from './errors.js';
import { engineReasonOf, pullFailure } from './pull-progress.js';
import { engineAuthOf, type DockerodeWithAuth } from './registry-auth.js';

/** Longest image pull when the caller sets no limit. */
const PULL_TIMEOUT_MS = 10 * 60_000;

export async function imageExists(docker: Dockerode, ref: string): Promise<boolean> {
  const operation = `imageExists ${String(ref)}`;
  checkImageRef(ref, operation);
  try {
    await engineCall(operation, () => docker.getImage(ref).inspect());
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

export async function pullImage(docker: Dockerode, ref: string, options: PullOptions = {}): Promise<void> {
  const operation = `pullImage ${String(ref)}`;
  checkImageRef(ref, operation);
  const parsed = parseImageReference(ref)!;
  // The name and the tag (or digest) apart: a name alone would pull every tag.
  const fromImage = parsed.host ? `${parsed.host}/${parsed.path}` : parsed.path;
  const tag = parsed.digest ?? parsed.tag ?? 'latest';
  const timeoutMs = options.timeoutMs ?? PULL_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let failure: string | null;
  try {
    // The query in `_query` alone: the credentials travel only in X-Registry-Auth.
    const stream = (await (docker as unknown as DockerodeWithAuth).createImage(engineAuthOf(options.registryAuth), {
      _query: { fromImage, tag },
      abortSignal: signal,
    })) as AsyncIterable<Buffer>;
    failure = await pullFailure(stream);
  } catch (err) {
    if (timeout.aborted && !options.signal?.aborted) {
      throw new DockerError(operation, `the pull did not finish within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`, null, { cause: err });
    }
    const e = toDockerError(operation, err);
    const reason = engineReasonOf(e.engineMessage);
    if (reason === e.engineMessage) throw e;
    const Kind = e.constructor as typeof DockerError;
    throw new Kind(operation, reason, e.statusCode, { cause: err });
  }
  if (failure !== null) throw new DockerError(operation, failure);
}

/** Local images carrying every given label, newest first. */
export async function imagesByLabel(docker: Dockerode, labels: Record<string, string>): Promise<LocalImage[]> {
  const operation = 'imagesByLabel';
  const label = labelFilters(labels, operation);
  const listed = (await engineCall(operation, () => docker.listImages({ filters: { label } }))) as Array<{
    Id: string;
    RepoTags?: string[] | null;
    Created: number;
    Labels?: Record<string, string> | null;
  }>;
  return listed
    .map((i) => ({ id: i.Id, tags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'), created: i.Created, labels: i.Labels ?? {} }))
    .sort((a, b) => b.created - a.created);
}

/**
 * Removes one tag of a Skiff-built image; the image goes with its last tag. Without force:
 * the engine refuses (409) to delete an image a container uses.
 */
export async function removeImageTag(docker: Dockerode, tag: string): Promise<boolean> {
  const operation = `removeImageTag ${String(tag)}`;
  checkImageRef(tag, operation);
  try {
    const image = (await engineCall(operation, () => docker.getImage(tag).inspect())) as { Config?: { Labels?: Record<string, string> | null } | null };
    if (!isManaged(image.Config?.Labels ?? undefined)) throw new DockerConflictError(operation, `image ${tag} is not managed by Skiff`);
    await engineCall(operation, () => docker.getImage(tag).remove());
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
