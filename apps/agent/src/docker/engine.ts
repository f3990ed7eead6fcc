/**
 * What the dockerode driver's parts share: one way to call the Engine API (its errors turned
 * into DockerError subclasses), the checks of every name that goes into a request path
 * against Docker's grammar, label filters, and the test that an object is Skiff's.
 */
import { parseImageReference, refuseServiceName } from '@skiff/domain';
import { MANAGED_LABEL } from './driver.js';
import { DockerError, DockerInvalidError, toDockerError } from './errors.js';

/** Docker network names. */
const NETWORK_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
/** Container and volume names (the engine's own rule). */
const OBJECT_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$/;

/** Runs one Engine API call; what it throws becomes a DockerError naming the operation. */
export async function engineCall<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw toDockerError(operation, err);
  }
}

/** Whether the engine answered that the object is not there. */
export function isNotFound(err: unknown): boolean {
  return err instanceof DockerError && err.statusCode === 404;
}

/** Swarm service names: swarmkit's rule, as libs/domain writes it (linear: app-name.ts). */
export function checkServiceName(name: string, operation: string): void {
  const refusal = refuseServiceName(name);
  if (refusal !== null) throw new DockerInvalidError(operation, refusal);
}

export function checkNetworkName(name: string, operation: string): void {
  if (typeof name !== 'string' || !NETWORK_NAME_RE.test(name)) {
    throw new DockerInvalidError(
      operation,
      `invalid network name ${JSON.stringify(name)}: letters, digits, '.', '-' and '_', starting with a letter or digit`,
    );
  }
}

export function checkObjectName(kind: 'container' | 'volume' | 'secret', name: string, operation: string): void {
  if (typeof name !== 'string' || !OBJECT_NAME_RE.test(name)) {
    throw new DockerInvalidError(
      operation,
      `invalid ${kind} name ${JSON.stringify(name)}: letters, digits, '.', '-' and '_', starting with a letter or digit`,
    );
  }
}

export function checkImageRef(ref: string, operation: string): void {
  if (typeof ref !== 'string' || parseImageReference(ref) === null) {
    throw new DockerInvalidError(operation, `invalid image reference ${JSON.stringify(ref)}`);
  }
}

export function labelFilters(labels: Record<string, string>, operation: string): string[] {
  return Object.entries(labels).map(([key, value]) => {
    if (key === '' || key.includes('=') || typeof value !== 'string') {
      throw new DockerInvalidError(operation, `invalid label filter ${JSON.stringify(key)}`);
    }
    return `${key}=${value}`;
  });
}

export function isManaged(labels: Record<string, string> | undefined): boolean {
  return labels?.[MANAGED_LABEL] === 'true';
}
