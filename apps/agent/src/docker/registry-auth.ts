/**
 * Registry credentials on their way to the engine: the value dockerode sends as
 * X-Registry-Auth with a service write or an image pull, and the forms of dockerode's calls
 * that take it (their published types list only the one-argument forms). The password goes
 * nowhere else: never into a URL or a log.
 */
import type { RegistryAuth } from './driver.js';

/** The credentials as the engine reads them (those three fields only), or undefined for none. */
export function engineAuthOf(auth: RegistryAuth | undefined): RegistryAuth | undefined {
  return auth ? { username: auth.username, password: auth.password, serveraddress: auth.serveraddress } : undefined;
}

/** dockerode's calls that take registry credentials as a first argument, as they run. */
export interface DockerodeWithAuth {
  createService(auth: RegistryAuth | undefined, spec: unknown): Promise<unknown>;
  createImage(auth: RegistryAuth | undefined, options: { _query: Record<string, string>; abortSignal?: AbortSignal }): Promise<unknown>;
}

/** A dockerode service whose update takes registry credentials (none: the engine keeps those of its last write). */
export interface ServiceWithAuth {
  update(auth: RegistryAuth | undefined, options: { _query: { version: number | undefined; rollback?: 'previous' }; _body: unknown }): Promise<unknown>;
}
