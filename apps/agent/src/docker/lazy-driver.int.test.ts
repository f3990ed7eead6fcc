// The Docker driver the agent's process uses (lazy-driver.ts) against the real engine: its
// own start-up reads (version, services by label) and the crash-loop watcher's (a service's tasks) over the socket answer what dockerode
// answers, with the same errors, and every other call reaches the dockerode driver.
import { randomBytes } from 'node:crypto';
import Dockerode from 'dockerode';
import { waitFor } from '@skiff/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerodeDriver } from './dockerode-driver.js';
import { MANAGED_LABEL, type ServiceSpec } from './driver.js';
import { engineCall } from './engine.js';
import { EngineSocket } from './engine-socket.js';
import { DockerError, DockerNotFoundError, DockerUnavailableError } from './errors.js';
import { LazyDockerDriver } from './lazy-driver.js';

const SOCKET = '/var/run/docker.sock';
const run = randomBytes(4).toString('hex');
const RUN_LABEL = 'skiff.test.lazy';
const dockerode = new DockerodeDriver({ docker: new Dockerode({ socketPath: SOCKET }) });
const lazy = new LazyDockerDriver({ socketPath: SOCKET, requestTimeoutMs: 60_000 });
const names = [`skt-lazy-b-${run}`, `skt-lazy-a-${run}`];

function spec(name: string): ServiceSpec {
  return {
    Name: name,
    Labels: { [MANAGED_LABEL]: 'true', 'skiff.kind': 'application', 'skiff.id': name, [RUN_LABEL]: run },
    TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Command: ['sh', '-c', 'while true; do sleep 1; done'] } },
    Mode: { Replicated: { Replicas: 0 } },
  };
}

afterAll(async () => {
  for (const name of names) await dockerode.removeService(name);
});

describe('LazyDockerDriver', () => {
  it('reads the engine version over the socket', async () => {
    const expected = (await new Dockerode({ socketPath: SOCKET }).version()) as { Version: string };
    expect((await lazy.version()).Version).toBe(expected.Version);
  });

  it('lists services by label as the dockerode driver does, sorted by name', async () => {
    for (const name of names) await dockerode.createOrUpdateService(spec(name));
    const labels = { [MANAGED_LABEL]: 'true', [RUN_LABEL]: run };
    const listed = await lazy.servicesByLabel(labels);
    expect(listed.map((s) => s.name)).toEqual([...names].sort());
    expect(listed).toEqual(await dockerode.servicesByLabel(labels));
    expect(await lazy.servicesByLabel({ [RUN_LABEL]: `${run}-none` })).toEqual([]);
  });

  // The crash-loop watcher reads every application's tasks every few seconds.
  it("reads a service's tasks over the socket as the dockerode driver does, without loading it", async () => {
    const running = `skt-lazy-t-${run}`;
    names.push(running);
    await dockerode.createOrUpdateService({ ...spec(running), Mode: { Replicated: { Replicas: 1 } } });
    const light = new LazyDockerDriver({ socketPath: SOCKET, requestTimeoutMs: 60_000 });
    await waitFor(async () => (await light.serviceTasks(running)).length > 0, { timeoutMs: 30_000, what: 'a task of the service' });
    expect(await light.serviceTasks(running)).toEqual(await dockerode.serviceTasks(running));
    await expect(light.serviceTasks(`skt-lazy-none-${run}`)).rejects.toBeInstanceOf(DockerNotFoundError);
    expect((light as unknown as { driver: unknown }).driver).toBeNull();
  });

  it('reaches the dockerode driver for everything else', async () => {
    expect(await lazy.imageExists('busybox:latest')).toBe(true);
    expect(await lazy.containerByName(`skt-lazy-none-${run}`)).toBeNull();
  });

  it('says the engine is unreachable as the dockerode driver does', async () => {
    const path = `/tmp/skt-no-docker-${run}.sock`;
    const none = new LazyDockerDriver({ socketPath: path, requestTimeoutMs: 5_000 });
    await expect(none.servicesByLabel({ [MANAGED_LABEL]: 'true' })).rejects.toBeInstanceOf(DockerUnavailableError);
    await expect(new DockerodeDriver({ socketPath: path }).servicesByLabel({ [MANAGED_LABEL]: 'true' })).rejects.toBeInstanceOf(DockerUnavailableError);
    await expect(none.version()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("turns the engine's refusals into DockerErrors with its message and status", async () => {
    const engine = new EngineSocket({ socketPath: SOCKET, timeoutMs: 60_000 });
    const err = await engineCall('list', () => engine.listServices({ filters: { nonsense: ['x'] } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DockerError);
    expect(err).toMatchObject({ statusCode: 400, engineMessage: expect.stringContaining('nonsense') });
  });
});
