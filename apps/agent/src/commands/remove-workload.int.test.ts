// RemoveWorkload against the real engine (single-node swarm, local busybox:latest).
import { CommandStatus } from '@skiff/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { TestServices } from '../testing/swarm-services.js';
import { removeWorkloadHandler } from './remove-workload.js';

const t = new TestServices('skt-remove');
const remove = removeWorkloadHandler({ driver: t.driver });
afterAll(() => t.cleanUp(), 60_000);

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

  it('refuses remove_volumes, which nothing needs yet', () => {
    const command = t.command('removeWorkload', { name: 'x', id: 'y' });
    if (command.payload?.$case === 'removeWorkload') command.payload.value.removeVolumes = true;
    expect(remove.validate(command)).toBe('remove_volumes is not supported yet');
  });
});
