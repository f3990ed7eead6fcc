// StartWorkload against the real engine (single-node swarm, local busybox:latest).
import { CommandStatus } from '@skiff/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { TestServices } from '../testing/swarm-services.js';
import { REPLICAS_LABEL, STOP_CONSTRAINT } from '../workloads/service-lifecycle.js';
import { startWorkloadHandler } from './start-workload.js';
import { stopWorkloadHandler } from './stop-workload.js';

const t = new TestServices('skt-start');
const deps = { driver: t.driver, pollIntervalMs: 200 };
const start = startWorkloadHandler(deps);
const stop = stopWorkloadHandler(deps);
afterAll(() => t.cleanUp(), 60_000);

const run = (handler: typeof start, workload: { name: string; id: string }, deadline?: Date) =>
  handler.run(t.context(t.command(handler === start ? 'startWorkload' : 'stopWorkload', workload, { deadline })));
const SUCCEEDED = { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };

describe('StartWorkload', () => {
  it('brings a stopped service back with the replica count it had, and waits until it runs', async () => {
    const svc = await t.create({ replicas: 2 });
    expect(await run(stop, svc)).toEqual(SUCCEEDED);
    expect(await run(start, svc)).toEqual(SUCCEEDED);
    expect(await t.running(svc.name)).toHaveLength(2);
    const spec = (await t.spec(svc.name))!;
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 2 } });
    expect(spec.Labels).not.toHaveProperty(REPLICAS_LABEL);

    // Again: it runs already, nothing is written.
    const tasks = (await t.running(svc.name)).map((task) => task.id).sort();
    expect(await run(start, svc)).toEqual(SUCCEEDED);
    expect((await t.running(svc.name)).map((task) => task.id).sort()).toEqual(tasks);
  }, 90_000);

  it('starts a stopped global service again', async () => {
    const svc = await t.create({ mode: { Global: {} } });
    expect(await run(stop, svc)).toEqual(SUCCEEDED);
    expect(await run(start, svc)).toEqual(SUCCEEDED);
    expect(await t.running(svc.name)).toHaveLength(1);
    expect((await t.spec(svc.name))!.TaskTemplate.Placement?.Constraints ?? []).not.toContain(STOP_CONSTRAINT);
  }, 90_000);

  it('fails with the task error when the started task fails, also right after it ran', async () => {
    const svc = await t.create({ command: "sh -c 'sleep 0.3; exit 3'", wait: false });
    expect(await run(stop, svc)).toEqual(SUCCEEDED);
    const outcome = await run(start, svc);
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/^starting service .+: task 1 failed: .*exit code 3/);
  }, 90_000);

  it('fails at the deadline when the tasks cannot be placed', async () => {
    const svc = await t.create({
      wait: false,
      tweak: (spec) => ({ ...spec, TaskTemplate: { ...spec.TaskTemplate, Placement: { Constraints: ['node.labels.skiff-test-nowhere==yes'] } } }),
    });
    expect(await run(stop, svc)).toEqual(SUCCEEDED);
    const outcome = await run(start, svc, new Date(Date.now() + 3_000));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/^starting service .+: not done before the command's deadline \(0\/1 tasks running\)$/);
  }, 90_000);

  it('fails when the workload has no service: it needs a deploy', async () => {
    const outcome = await run(start, { name: 'skt-none', id: `absent-${t.run}` });
    expect(outcome).toEqual({
      status: CommandStatus.COMMAND_STATUS_FAILED,
      reason: 'service skt-none does not exist on this server: deploy the application first',
    });
  });
});
