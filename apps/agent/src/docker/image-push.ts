/**
 * A built image on its way to a registry the swarm's nodes pull from: tagged with the
 * registry's reference, pushed (`POST /images/{name}/push`, the login in X-Registry-Auth
 * only), and answered with the digest the registry gave it, which the service then names so
 * every node runs exactly that image. A failed push reports the registry's reason, given in
 * the last progress event as for pulls (pull-progress.ts).
 */
import type Dockerode from 'dockerode';
import { parseImageReference } from '@skiff/domain';
import type { RegistryAuth } from './driver.js';
import { checkImageRef, engineCall } from './engine.js';
import { DockerError, DockerInvalidError } from './errors.js';
import { pullFailure } from './pull-progress.js';
import { engineAuthOf } from './registry-auth.js';

const PUSH_TIMEOUT_MS = 10 * 60_000;

export interface PushOptions {
  registryAuth?: RegistryAuth;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Tags `source` as `target` (`host/path:tag`) and pushes it; answers the pushed digest (`sha256:…`). */
export async function pushImage(docker: Dockerode, source: string, target: string, options: PushOptions = {}): Promise<string> {
  const operation = `pushImage ${String(target)}`;
  checkImageRef(source, operation);
  checkImageRef(target, operation);
  const parsed = parseImageReference(target);
  if (!parsed?.host || !parsed.tag || parsed.digest) throw new DockerInvalidError(operation, 'the target must name a registry host and a tag, and no digest');
  const repo = `${parsed.host}/${parsed.path}`;
  const tag = parsed.tag;
  await engineCall(operation, () => docker.getImage(source).tag({ repo, tag }) as Promise<unknown>);
  const timeoutMs = options.timeoutMs ?? PUSH_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const events: string[] = [];
  const stream = (await engineCall(operation, () =>
    docker.getImage(repo).push({
      _query: { tag },
      abortSignal: signal,
      // The engine wants the header even for a registry without login.
      authconfig: engineAuthOf(options.registryAuth) ?? {},
    } as unknown as Dockerode.ImagePushOptions) as Promise<AsyncIterable<Buffer>>,
  )) as AsyncIterable<Buffer>;
  const failure = await pullFailure(recording(stream, events)).catch((err: unknown) => {
    if (timeout.aborted && !options.signal?.aborted) throw new DockerError(operation, `the push did not finish within ${Math.round(timeoutMs / 1000)} s`, null, { cause: err });
    throw err;
  });
  if (failure !== null) throw new DockerError(operation, failure);
  const digest = pushedDigest(events.join(''));
  if (!digest) throw new DockerError(operation, 'the registry answered no digest for the pushed image');
  return digest;
}

async function* recording(stream: AsyncIterable<Buffer | string>, into: string[]): AsyncIterable<string> {
  for await (const chunk of stream) {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    into.push(text);
    yield text;
  }
}

/** The digest of the push's `aux` event (`{"aux":{"Tag","Digest","Size"}}`), or null. */
export function pushedDigest(progress: string): string | null {
  let digest: string | null = null;
  for (const line of progress.split('\n')) {
    try {
      const event = JSON.parse(line) as { aux?: { Digest?: unknown } };
      if (typeof event.aux?.Digest === 'string' && /^sha256:[0-9a-f]{64}$/.test(event.aux.Digest)) digest = event.aux.Digest;
    } catch {
      // Not a whole event.
    }
  }
  return digest;
}
