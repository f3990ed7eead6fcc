/**
 * The image pull step of DeployApplication. The engine's tasks pull their image themselves
 * and fall back to a local copy when the pull fails, which turns a refused login into a
 * task error that only says "No such image". So, when the command carries registry
 * credentials and the image is not here (or the command asks for `force_pull`), the agent
 * pulls it first, with the same credentials, and a failure ends the deployment with the
 * registry's own reason (`unauthorized: authentication required`…).
 *
 * Images without credentials are left to the engine as before (a local image is used as it
 * is). The password travels only to the driver, which sends it in `X-Registry-Auth`; log
 * lines name the image and the registry, never the login.
 */
import type { DeployApplication } from '@skiff/proto';
import type { DockerDriver, RegistryAuth } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import type { DeploymentEvents } from './deployment-events.js';

/** The command's registry login in the driver's shape, or undefined when it carries none. */
export function registryAuthOf(deploy: DeployApplication): RegistryAuth | undefined {
  const auth = deploy.registryAuth;
  if (!auth || (auth.username === '' && auth.password === '')) return undefined;
  return { username: auth.username, password: auth.password, serveraddress: auth.serverAddress };
}

export interface PullStep {
  driver: DockerDriver;
  deploy: DeployApplication;
  registryAuth: RegistryAuth | undefined;
  events: DeploymentEvents;
  /** Aborts when the agent abandons the command. */
  signal: AbortSignal;
  /** The pull must have finished by then (epoch ms). */
  deadline: number;
  now: () => Date;
}

/** Pulls when needed; answers why the deployment fails, or null to go on. */
export async function pullIfNeeded(step: PullStep): Promise<{ failed: string | null }> {
  const { driver, deploy, registryAuth, events } = step;
  const needed = deploy.forcePull || (registryAuth !== undefined && !(await driver.imageExists(deploy.image)));
  if (!needed) return { failed: null };
  const timeoutMs = step.deadline - step.now().getTime();
  if (timeoutMs <= 0) return { failed: `no time was left to pull image ${deploy.image} before the deadline` };

  const from = registryAuth ? ` from ${registryAuth.serveraddress} with the application's registry credentials` : '';
  await events.log(`Pulling image ${deploy.image}${from}`);
  try {
    await driver.pullImage(deploy.image, { ...(registryAuth ? { registryAuth } : {}), signal: step.signal, timeoutMs });
  } catch (err) {
    if (step.signal.aborted || !(err instanceof DockerError)) throw err;
    return { failed: `could not pull image ${deploy.image}: ${err.engineMessage}` };
  }
  await events.log(`Pulled image ${deploy.image}`);
  return { failed: null };
}
