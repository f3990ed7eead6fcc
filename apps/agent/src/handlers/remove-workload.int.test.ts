// RemoveWorkload against the real engine (single-node swarm, local busybox:latest).
import { swarmServiceSpec } from '@skiff/domain';
import { CommandStatus, WorkloadKind } from '@skiff/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { LOOP, TestServices } from '../testing/swarm-services.js';
import { waitUntil } from '../testing/wait.js';
import { removeWorkloadHandler } from './remove-workload.js';

const t = new TestServices('skt-remove');
const remove = removeWorkloadHandler({ driver: t.driver });
/** Volumes the cache tests made: removed once the services that use them are gone. */
const volumes = new Set<string>();
afterAll(async () => {
  await t.cleanUp();
  for (const name of volumes) {
    await waitUntil(
      `volume ${name} removed`,
      () => t.docker.getVolume(name).remove().then(
        () => true,
        (err: { statusCode?: number }) => err.statusCode === 404,
      ),
      60_000,
      200,
    );
  }
}, 90_000);

const SUCCEEDED = { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };

describe('RemoveWorkload', () => {
  it("removes the workload's service, and succeeds again when it is gone", async () => {
    const svc = await t.create();
    const command = t.command('removeWorkload', svc);
    expect(await remove.run(t.context(command))).toEqual(SUCCEEDED);
    expect(await t.spec(svc.name)).toBeNull();
    expect(await remove.run(t.context(command, { resumed: true }))).toEqual(SUCCEEDED);
  }, 90_000);

  it('finds the service by its labels, also under an earlier name', async () => {
    const id = `renamed-${t.run}`;
    const first = await t.create({ id });
    expect(await remove.run(t.context(t.command('removeWorkload', { name: 'skt-new-name', id })))).toEqual(SUCCEEDED);
    expect(await t.spec(first.name)).toBeNull();
  }, 90_000);

  it('never removes a service that is not Skiff-managed or belongs to another workload', async () => {
    const other = await t.create();
    const unmanagedName = t.name();
    const id = `unmanaged-${t.run}`;
    await t.docker.createService({
      Name: unmanagedName,
      Labels: { 'skiff.kind': 'application', 'skiff.id': id },
      TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Command: ['sleep', '600'] } },
      Mode: { Replicated: { Replicas: 0 } },
    });
    expect(await remove.run(t.context(t.command('removeWorkload', { name: unmanagedName, id })))).toEqual(SUCCEEDED);
    expect(await t.spec(unmanagedName)).not.toBeNull();
    expect(await remove.run(t.context(t.command('removeWorkload', { name: other.name, id: `another-${t.run}` })))).toEqual(SUCCEEDED);
    expect(await t.spec(other.name)).not.toBeNull();
  }, 90_000);

  it('takes remove_volumes for an application, whose mounted volumes carry its labels', () => {
    const command = t.command('removeWorkload', { name: 'x', id: 'y' });
    if (command.payload?.$case === 'removeWorkload') command.payload.value.removeVolumes = true;
    expect(remove.validate(command)).toBeNull();
  });

  it("removes a cache's volume with remove_volumes, keeps it without, and never touches another cache's", async () => {
    const mine = await cacheWithVolume(`cache-${t.run}`);
    const other = await cacheWithVolume(`other-cache-${t.run}`);
    const cacheCommand = (removeVolumes: boolean) => {
      const command = t.command('removeWorkload', mine, { kind: WorkloadKind.WORKLOAD_KIND_CACHE });
      if (command.payload?.$case === 'removeWorkload') command.payload.value.removeVolumes = removeVolumes;
      return command;
    };
    expect(remove.validate(cacheCommand(true))).toBeNull();

    // Without remove_volumes (a rebuild): the service and its containers are gone when it
    // succeeds (a deploy that follows never shares the data with them); the data stays.
    expect(await remove.run(t.context(cacheCommand(false)))).toEqual(SUCCEEDED);
    expect(await t.spec(mine.name)).toBeNull();
    expect(await t.driver.containersByLabel({ 'skiff.kind': 'cache', 'skiff.id': mine.id })).toEqual([]);
    expect(await volumeExists(mine.volume)).toBe(true);

    // Deployed again on the same volume, then removed with it: the command waits until the
    // removed service's container lets go of the volume.
    await cacheWithVolume(mine.id, mine.name);
    expect(await remove.run(t.context(cacheCommand(true)))).toEqual(SUCCEEDED);
    expect(await t.spec(mine.name)).toBeNull();
    expect(await volumeExists(mine.volume)).toBe(false);
    expect(await remove.run(t.context(cacheCommand(true), { resumed: true }))).toEqual(SUCCEEDED);

    expect(await t.spec(other.name)).not.toBeNull();
    expect(await volumeExists(other.volume)).toBe(true);
  }, 120_000);
});


const volumeExists = async (name: string) =>
  t.docker
    .getVolume(name)
    .inspect()
    .then(() => true, () => false);

/** A running cache-kind service (busybox) with a named volume the engine creates with the cache's labels. */
async function cacheWithVolume(id: string, name = t.name()) {
  const volume = `${id}-data`;
  volumes.add(volume);
  await t.driver.createOrUpdateService(
    swarmServiceSpec({
      appName: name,
      kind: 'cache',
      id,
      image: 'busybox:latest',
      env: [],
      command: LOOP,
      args: null,
      replicas: 1,
      memoryLimit: null,
      memoryReservation: null,
      cpuLimit: null,
      cpuReservation: null,
      platformNetwork: 'unused',
      detachPlatformNetwork: true,
      volumes: [{ source: volume, target: '/data' }],
      stopGracePeriodCluster: 1_000_000_000,
    }),
  );
  await waitUntil(`${name} running`, async () => (await t.running(name)).length === 1, 60_000, 200);
  return { name, id, volume };
}
