// StopWorkload against the real engine (single-node swarm, local busybox:latest).
import { CommandStatus, WorkloadKind } from '@skiff/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { TestServices } from '../testing/swarm-services.js';
import { REPLICAS_LABEL, STOP_CONSTRAINT } from '../workloads/service-lifecycle.js';
import { stopWorkloadHandler } from './stop-workload.js';

const t = new TestServices('skt-stop');
const handler = stopWorkloadHandler({ driver: t.driver, pollIntervalMs: 200 });
afterAll(() => t.cleanUp(), 60_000);

const stop = (workload: { name: string; id: string }) => {
  const command = t.command('stopWorkload', workload);
  return handler.run(t.context(command));
};

describe('StopWorkload', () => {
  it('scales a replicated service to 0, keeps the count, and waits until no task runs', async () => {
    const svc = await t.create({ replicas: 2 });
    expect(await stop(svc)).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    expect(await t.running(svc.name)).toEqual([]);
    const tasks = await t.driver.serviceTasks(svc.name);
    expect(tasks.every((task) => !['running', 'starting', 'pending'].includes(task.state))).toBe(true);
    const spec = (await t.spec(svc.name))!;
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 0 } });
    expect(spec.Labels[REPLICAS_LABEL]).toBe('2');

    // Again: nothing changes (idempotent), the kept count stays.
    const version = (await t.driver.servicesByLabel({ 'skiff.id': svc.id }))[0]!.version;
    expect((await stop(svc)).status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect((await t.driver.servicesByLabel({ 'skiff.id': svc.id }))[0]!.version).toBe(version);
    expect((await t.spec(svc.name))!.Labels[REPLICAS_LABEL]).toBe('2');
  }, 90_000);

  it('stops a global service with a constraint no node matches', async () => {
    const svc = await t.create({ mode: { Global: {} } });
    expect((await stop(svc)).status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await t.running(svc.name)).toEqual([]);
    const spec = (await t.spec(svc.name))!;
    expect(spec.Mode).toEqual({ Global: {} });
    expect(spec.TaskTemplate.Placement?.Constraints).toContain(STOP_CONSTRAINT);
  }, 90_000);

  it('succeeds when the workload has no service, and touches services that are not its own', async () => {
    expect((await stop({ name: t.name(), id: `absent-${t.run}` })).status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);

    // A service with the workload's name but another skiff.id is someone else's.
    const other = await t.create();
    expect((await stop({ name: other.name, id: `someone-else-${t.run}` })).status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(await t.running(other.name)).toHaveLength(1);
  }, 90_000);

  it('refuses a workload without id, or of a kind that is not a service', () => {
    expect(handler.validate(t.command('stopWorkload', { name: 'x', id: '' }))).toMatch(/workload/);
    expect(handler.validate(t.command('stopWorkload', { name: 'x', id: 'y' }, { kind: WorkloadKind.WORKLOAD_KIND_UNSPECIFIED }))).toMatch(
      /WORKLOAD_KIND_UNSPECIFIED are not handled/,
    );
    expect(handler.validate(t.command('stopWorkload', { name: 'x', id: 'y' }))).toBeNull();
  });

  it('fails at the deadline while tasks are still running, saying so', async () => {
    // A task that ignores SIGTERM (no init) for a long grace period, and a deadline shorter than that.
    const svc = await t.create({
      command: "sh -c 'trap \"\" TERM; while true; do sleep 1; done'",
      tweak: (spec) => ({
        ...spec,
        TaskTemplate: { ...spec.TaskTemplate, ContainerSpec: { ...spec.TaskTemplate.ContainerSpec, Init: false, StopGracePeriod: 30_000_000_000 } },
      }),
    });
    const command = t.command('stopWorkload', svc, { deadline: new Date(Date.now() + 5_000) });
    const outcome = await handler.run(t.context(command));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/^stopping service .+: not done before the command's deadline \(1 task\(s\) still running\)$/);
  }, 120_000);
});
