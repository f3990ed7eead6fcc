// The dockerode driver against the real Docker Engine (a single-node swarm, started by
// tools/test through tools/lib/services.sh, with the local busybox:latest image). Every
// object gets a name unique to this run and is removed afterwards, whatever happened.
import { randomBytes } from 'node:crypto';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil as waitFor } from '../testing/wait.js';
import { DockerodeDriver } from './dockerode-driver.js';
import { MANAGED_LABEL, type ServiceSpec, type TaskInfo } from './driver.js';
import {
  DockerConflictError,
  DockerInvalidError,
  DockerNotFoundError,
  DockerUnavailableError,
} from './errors.js';

const run = randomBytes(4).toString('hex');
const RUN_LABEL = 'skiff.test.run';
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const driver = new DockerodeDriver({ docker });

const services = new Set<string>();
const networks = new Set<string>();

function uniqueName(kind: string): string {
  return `skt-${kind}-${run}`;
}

/** The engine can be slow to converge under load: a longer deadline than the default. */
const waitUntil = <T>(what: string, check: () => Promise<T | null | undefined | false>) => waitFor(what, check, 45_000, 200);

function serviceSpec(name: string, overrides: { image?: string; env?: string[]; revision?: string; network?: string } = {}): ServiceSpec {
  services.add(name);
  return {
    Name: name,
    Labels: { [MANAGED_LABEL]: 'true', 'skiff.kind': 'application', 'skiff.id': name, [RUN_LABEL]: run },
    TaskTemplate: {
      ContainerSpec: {
        Image: overrides.image ?? 'busybox:latest',
        Command: ['sh', '-c', 'while true; do sleep 1; done'],
        Env: overrides.env ?? [],
        Labels: { 'skiff.test.revision': overrides.revision ?? '1' },
        // tini as PID 1: the shell loop stops at once instead of waiting out the grace period.
        Init: true,
        StopGracePeriod: 2_000_000_000,
      },
      RestartPolicy: { Condition: 'any', Delay: 1_000_000_000 },
      ...(overrides.network ? { Networks: [{ Target: overrides.network }] } : {}),
    },
    Mode: { Replicated: { Replicas: 1 } },
    UpdateConfig: { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback', Monitor: 1_000_000_000 },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}

/** Removes what this file created, each step on its own so one failure does not stop the rest. */
async function cleanUp(): Promise<void> {
  const problems: string[] = [];
  for (const name of services) {
    try {
      await docker.getService(name).remove();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 404) problems.push(`service ${name}: ${String(err)}`);
    }
  }
  for (const name of networks) {
    try {
      // A network can go once the containers of removed services have left it.
      await waitUntil(`network ${name} removable`, async () => {
        try {
          await docker.getNetwork(name).remove();
          return true;
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode === 404) return true;
          throw err;
        }
      });
    } catch (err) {
      problems.push(`network ${name}: ${String(err)}`);
    }
  }
  if (problems.length) throw new Error(`clean-up left objects behind:\n${problems.join('\n')}`);
}

describe('DockerodeDriver against the Docker Engine', () => {
  beforeAll(async () => {
    // tools/test starts the engine; say clearly when it is not there rather than time out.
    await docker.ping().catch((err: unknown) => {
      throw new Error(`no Docker Engine at /var/run/docker.sock (run the tests through tools/test): ${String(err)}`);
    });
  });

  afterAll(cleanUp, 120_000);

  it('ensures the swarm and an attachable overlay network, idempotently', async () => {
    const first = await driver.ensureSwarm();
    const second = await driver.ensureSwarm();
    expect(second).toEqual({ nodeId: first.nodeId, created: false });
    expect(first.nodeId).not.toBe('');

    const name = uniqueName('net');
    networks.add(name);
    const created = await driver.ensureNetwork(name);
    expect(created).toMatchObject({ name, created: true });
    const again = await driver.ensureNetwork(name);
    expect(again).toEqual({ id: created.id, name, created: false });

    const inspected = (await docker.getNetwork(name).inspect()) as {
      Driver: string;
      Scope: string;
      Attachable: boolean;
      Labels: Record<string, string>;
    };
    expect(inspected).toMatchObject({ Driver: 'overlay', Scope: 'swarm', Attachable: true });
    expect(inspected.Labels).toEqual({ [MANAGED_LABEL]: 'true' });
  });

  it('creates a service, rolls out an update, lists it by label and removes it', async () => {
    const network = uniqueName('app-net');
    networks.add(network);
    await driver.ensureNetwork(network);
    const name = uniqueName('app');

    const created = await driver.createOrUpdateService(serviceSpec(name, { env: ['GREETING=hello'], network }));
    expect(created).toMatchObject({ name, created: true, image: 'busybox:latest', replicas: 1 });
    expect(created.labels).toMatchObject({ [MANAGED_LABEL]: 'true', [RUN_LABEL]: run });

    const firstTask = await waitUntil('a running task', async () => {
      const tasks = await driver.serviceTasks(name);
      return tasks.find((t) => t.state === 'running' && t.desiredState === 'running');
    });
    expect(firstTask).toMatchObject({ labels: { 'skiff.test.revision': '1' }, error: null, image: 'busybox:latest' });
    expect(firstTask.containerId).toMatch(/^[0-9a-f]{64}$/);

    const updated = await driver.createOrUpdateService(
      serviceSpec(name, { env: ['GREETING=bonjour'], revision: '2', network }),
    );
    expect(updated).toMatchObject({ id: created.id, created: false });
    expect(updated.version).toBeGreaterThan(created.version);

    // The new version runs, the old task is told to shut down, the rollout is complete.
    const rolledOut = await waitUntil('the second revision rolled out', async () => {
      const [service] = await driver.servicesByLabel({ [RUN_LABEL]: run, 'skiff.id': name });
      const tasks = await driver.serviceTasks(name);
      const wanted = tasks.filter((t) => t.desiredState === 'running');
      const done =
        service?.updateState === 'completed' &&
        wanted.length === 1 &&
        wanted[0].state === 'running' &&
        wanted[0].labels['skiff.test.revision'] === '2';
      return done ? tasks : null;
    });
    const old = rolledOut.find((t: TaskInfo) => t.id === firstTask.id);
    expect(old?.desiredState).toBe('shutdown');
    expect(rolledOut[0].labels['skiff.test.revision']).toBe('2');

    const container = (await docker.getContainer(rolledOut[0].containerId!).inspect()) as { Config: { Env: string[] } };
    expect(container.Config.Env).toContain('GREETING=bonjour');

    const listed = await driver.servicesByLabel({ [MANAGED_LABEL]: 'true', [RUN_LABEL]: run });
    expect(listed.map((s) => s.name)).toContain(name);
    expect(listed.find((s) => s.name === name)).toMatchObject({ id: created.id, image: 'busybox:latest' });

    expect(await driver.removeService(name)).toBe(true);
    expect(await driver.removeService(name)).toBe(false);
    await expect(driver.serviceTasks(name)).rejects.toBeInstanceOf(DockerNotFoundError);
    expect((await driver.servicesByLabel({ [RUN_LABEL]: run })).map((s) => s.name)).not.toContain(name);
  }, 120_000);

  it('surfaces why the tasks of a service with a missing image fail', async () => {
    const image = `skiff-missing-${run}:none`;
    expect(await driver.imageExists(image)).toBe(false);
    const name = uniqueName('missing');
    await driver.createOrUpdateService(serviceSpec(name, { image }));
    const failed = await waitUntil('a task with an error', async () => {
      const tasks = await driver.serviceTasks(name);
      return tasks.find((t) => t.error !== null);
    });
    expect(['rejected', 'failed']).toContain(failed.state);
    expect(failed.error).toContain(`No such image: ${image}`);
    expect(await driver.removeService(name)).toBe(true);
  }, 90_000);

  it('answers whether an image is present, refusing what is not an image reference', async () => {
    expect(await driver.imageExists('busybox:latest')).toBe(true);
    expect(await driver.imageExists('busybox')).toBe(true);
    await expect(driver.imageExists('busybox:latest/../../containers/json?')).rejects.toBeInstanceOf(DockerInvalidError);
  });

  it("turns the engine's refusals into typed errors with the engine's message", async () => {
    const name = uniqueName('bad');
    const spec = serviceSpec(name);
    const bad = { ...spec, EndpointSpec: { Mode: 'bogus' } } as unknown as ServiceSpec;
    const err = await driver.createOrUpdateService(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DockerInvalidError);
    expect(err).toMatchObject({ statusCode: 400, engineMessage: 'invalid resolution mode: "bogus"' });

    await expect(driver.createOrUpdateService({ ...spec, Name: 'no spaces allowed' })).rejects.toBeInstanceOf(
      DockerInvalidError,
    );
    await expect(driver.createOrUpdateService({ ...spec, Labels: {} })).rejects.toThrow(/skiff\.managed=true/);

    const nowhere = new DockerodeDriver({ socketPath: `/tmp/skiff-no-docker-${run}.sock` });
    await expect(nowhere.imageExists('busybox:latest')).rejects.toBeInstanceOf(DockerUnavailableError);
  });

  it('neither updates nor removes a service that Skiff does not manage', async () => {
    const name = uniqueName('foreign');
    services.add(name);
    await docker.createService({
      Name: name,
      Labels: { [RUN_LABEL]: run },
      TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Command: ['sleep', '600'], Init: true } },
      EndpointSpec: { Mode: 'dnsrr' },
    });
    await expect(driver.createOrUpdateService(serviceSpec(name))).rejects.toBeInstanceOf(DockerConflictError);
    await expect(driver.removeService(name)).rejects.toBeInstanceOf(DockerConflictError);
    const [still] = await driver.servicesByLabel({ [RUN_LABEL]: run, 'skiff.id': name });
    expect(still).toBeUndefined();
    expect((await driver.servicesByLabel({ [RUN_LABEL]: run })).map((s) => s.name)).toContain(name);
  });
});
