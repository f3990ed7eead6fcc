/**
 * Images, through dockerode: whether one is here, and its pull (with the registry
 * credentials when given, within a time limit). A failed pull reports the registry's own
 * reason, which the engine gives in its last progress event (pull-progress.ts).
 */
import type Dockerode from 'dockerode';
import { parseImageReference } from '@skiff/domain';
import type { PullOptions } from './driver.js';
import { checkImageRef, engineCall, isNotFound } from './engine.js';
import { DockerError, toDockerError } from './errors.js';
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
