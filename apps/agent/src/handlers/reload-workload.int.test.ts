// ReloadWorkload against the real engine (single-node swarm, local busybox:latest).
import { CommandStatus } from '@skiff/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { TestServices } from '../testing/swarm-services.js';
import { reloadWorkloadHandler } from './reload-workload.js';
import { RELOAD_LABEL } from '../workloads/service-lifecycle.js';
import { stopWorkloadHandler } from './stop-workload.js';

const t = new TestServices('skt-reload');
const deps = { driver: t.driver, pollIntervalMs: 200 };
const reload = reloadWorkloadHandler(deps);
afterAll(() => t.cleanUp(), 60_000);

const SUCCEEDED = { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };
const containers = async (name: string) => (await t.running(name)).map((task) => task.containerId).sort();

describe('ReloadWorkload', () => {
  it('replaces every task with the same spec and waits until the new ones run', async () => {
    const svc = await t.create({ replicas: 2 });
    const before = (await t.spec(svc.name))!;
    const oldContainers = await containers(svc.name);
    const command = t.command('reloadWorkload', svc);
    expect(await reload.run(t.context(command))).toEqual(SUCCEEDED);

    const after = (await t.spec(svc.name))!;
    expect(after.TaskTemplate.ForceUpdate).toBe((before.TaskTemplate.ForceUpdate ?? 0) + 1);
    expect(after.Labels[RELOAD_LABEL]).toBe(command.commandId);
    expect(after.TaskTemplate.ContainerSpec).toEqual(before.TaskTemplate.ContainerSpec);
    const running = await t.running(svc.name);
    expect(running).toHaveLength(2);
    expect(running.every((task) => task.forceUpdate === after.TaskTemplate.ForceUpdate)).toBe(true);
    const newContainers = await containers(svc.name);
    expect(newContainers.filter((c) => oldContainers.includes(c))).toEqual([]);

    // The same command again (an agent restart): no second restart.
    expect(await reload.run(t.context(command, { resumed: true }))).toEqual(SUCCEEDED);
    expect((await t.spec(svc.name))!.TaskTemplate.ForceUpdate).toBe(after.TaskTemplate.ForceUpdate);
    expect(await containers(svc.name)).toEqual(newContainers);
  }, 90_000);

  it('leaves a stopped service stopped', async () => {
    const svc = await t.create();
    const stop = stopWorkloadHandler(deps);
    expect(await stop.run(t.context(t.command('stopWorkload', svc)))).toEqual(SUCCEEDED);
    const version = (await t.driver.servicesByLabel({ 'skiff.id': svc.id }))[0]!.version;
    expect(await reload.run(t.context(t.command('reloadWorkload', svc)))).toEqual(SUCCEEDED);
    expect(await t.running(svc.name)).toEqual([]);
    expect((await t.driver.servicesByLabel({ 'skiff.id': svc.id }))[0]!.version).toBe(version);
  }, 90_000);

  it('fails when the workload has no service', async () => {
    const outcome = await reload.run(t.context(t.command('reloadWorkload', { name: 'skt-none', id: `absent-${t.run}` })));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toContain('deploy the application first');
  });
});
