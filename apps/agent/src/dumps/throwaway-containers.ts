/**
 * Creating, starting and removing a backup command's throw-away containers (volume tools,
 * verifications' scratch databases, libSQL relays): one that cannot start is removed again,
 * and removing one that is gone already is no failure.
 */
import type Dockerode from 'dockerode';
import { engineCall, isNotFound } from '../docker/engine.js';

/** Creates and starts the container; answers its id. */
export async function startThrowaway(docker: Dockerode, options: Dockerode.ContainerCreateOptions): Promise<string> {
  const container = await engineCall('create container', () => docker.createContainer(options));
  try {
    await engineCall('start container', () => container.start());
  } catch (err) {
    await removeThrowaway(docker, container.id, true);
    throw err;
  }
  return container.id;
}

/** Removes the container, with its anonymous volumes when `volumes` (never a named one); nothing when it is gone. */
export async function removeThrowaway(docker: Dockerode, idOrName: string, volumes: boolean): Promise<void> {
  await engineCall('remove container', () => docker.getContainer(idOrName).remove({ force: true, v: volumes })).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}
