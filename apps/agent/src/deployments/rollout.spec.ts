import { describe, expect, it } from 'vitest';
import type { ServiceInfo, ServiceSpec, TaskInfo } from '../docker/driver.js';
import { DEPLOYMENT_LABEL } from './deploy-spec.js';
import { assessRollout, monitorWindowMs, rolloutTarget, type RolloutTarget } from './rollout.js';

const DEP = 'dep-new';

function aService(overrides: Partial<ServiceInfo> = {}): ServiceInfo {
  return {
    id: 'svc1',
    name: 'web',
    version: 12,
    labels: { 'skiff.managed': 'true', [DEPLOYMENT_LABEL]: DEP },
    image: 'busybox:latest',
    replicas: 2,
    updateState: null,
    updateMessage: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}

let ids = 0;
function aTask(overrides: Partial<TaskInfo> & { deployment?: string } = {}): TaskInfo {
  const { deployment = DEP, ...rest } = overrides;
  ids++;
  return {
    id: `task${ids}`,
    slot: 1,
    nodeId: 'node1',
    state: 'running',
    desiredState: 'running',
    message: 'started',
    error: null,
    exitCode: null,
    containerId: 'c'.repeat(64),
    image: 'busybox:latest',
    labels: { [DEPLOYMENT_LABEL]: deployment },
    forceUpdate: 0,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    ...rest,
  };
}

const two: RolloutTarget = { mode: 'replicated', replicas: 2 };
const assess = (service: ServiceInfo, tasks: TaskInfo[], target: RolloutTarget = two) =>
  assessRollout({ deploymentId: DEP, target, service, tasks });

describe('assessRollout', () => {
  it('waits until as many tasks of this deployment run as replicas are wanted', () => {
    const old = aTask({ deployment: 'dep-old', slot: 2 });
    expect(assess(aService(), [aTask({ slot: 1 }), old])).toEqual({ phase: 'waiting', summary: '1/2 tasks running' });
    expect(assess(aService(), [aTask({ slot: 1, state: 'preparing' }), aTask({ slot: 2, state: 'starting' })])).toEqual({
      phase: 'waiting',
      summary: '0/2 tasks running',
    });
    expect(assess(aService(), [aTask({ slot: 1 }), aTask({ slot: 2 })])).toEqual({ phase: 'done', summary: '2/2 tasks running' });
  });

  it('does not count a running task the engine is shutting down', () => {
    expect(assess(aService(), [aTask(), aTask({ desiredState: 'shutdown' })]).phase).toBe('waiting');
  });

  it("waits for the engine's update to complete its monitor period", () => {
    const tasks = [aTask({ slot: 1 }), aTask({ slot: 2 })];
    expect(assess(aService({ updateState: 'updating' }), tasks).phase).toBe('waiting');
    expect(assess(aService({ updateState: 'completed' }), tasks).phase).toBe('done');
  });

  it('waits until each running task of this deployment has run for the monitor window', () => {
    const startedAt = Date.parse('2026-01-01T00:00:00Z');
    const at = (ms: number) => new Date(startedAt + ms);
    const tasks = [aTask({ slot: 1 }), aTask({ slot: 2, updatedAt: '2026-01-01T00:00:00.300Z' })];
    const look = (ms: number) => assessRollout({ deploymentId: DEP, target: two, service: aService(), tasks, monitorMs: 500, now: at(ms) });
    expect(look(400)).toEqual({ phase: 'waiting', summary: '2/2 tasks running' });
    expect(look(799).phase).toBe('waiting');
    expect(look(800)).toEqual({ phase: 'done', summary: '2/2 tasks running' });
  });

  it('waits while a task of the previous version is still meant to run', () => {
    const tasks = [aTask({ slot: 1 }), aTask({ slot: 2 })];
    const old = aTask({ deployment: 'dep-old', slot: 1 });
    expect(assess(aService(), [...tasks, old]).phase).toBe('waiting');
    expect(assess(aService(), [...tasks, { ...old, desiredState: 'shutdown' }]).phase).toBe('done');
  });

  it('does not count the monitor window of a task that failed within it: the deployment fails', () => {
    const now = new Date('2026-01-01T00:00:00.200Z');
    const crashed = aTask({ state: 'failed', desiredState: 'shutdown', error: 'task: non-zero exit (3)', updatedAt: '2026-01-01T00:00:00.150Z' });
    expect(assessRollout({ deploymentId: DEP, target: { mode: 'replicated', replicas: 1 }, service: aService(), tasks: [crashed, aTask({ slot: 1 })], monitorMs: 500, now })).toEqual({
      phase: 'failed',
      reason: 'task 1 failed: task: non-zero exit (3)',
    });
  });

  it("fails with the task's error when a task of this deployment fails or is rejected", () => {
    const rejected = aTask({ slot: 1, state: 'rejected', error: 'No such image: nope:1', message: 'preparing' });
    expect(assess(aService(), [rejected, aTask({ slot: 2 })])).toEqual({
      phase: 'failed',
      reason: 'task 1 rejected: No such image: nope:1',
    });
    const crashed = aTask({ slot: 2, state: 'failed', error: null, message: 'started', exitCode: 3 });
    expect(assess(aService(), [crashed])).toEqual({ phase: 'failed', reason: 'task 2 failed: started (exit code 3)' });
  });

  it("ignores failures of the previous version's tasks", () => {
    const oldFailed = aTask({ deployment: 'dep-old', state: 'failed', error: 'boom' });
    expect(assess(aService(), [oldFailed, aTask({ slot: 1 }), aTask({ slot: 2 })]).phase).toBe('done');
  });

  it('fails when the engine rolled back, naming its message and the task error', () => {
    const service = aService({
      labels: { [DEPLOYMENT_LABEL]: 'dep-old' },
      updateState: 'rollback_completed',
      updateMessage: 'rollback completed',
    });
    const failed = aTask({ state: 'failed', error: 'task: non-zero exit (1)' });
    expect(assess(service, [failed])).toEqual({
      phase: 'failed',
      reason: 'the engine rolled back to the previous version: rollback completed: task 1 failed: task: non-zero exit (1)',
    });
    expect(assess(aService({ updateState: 'rollback_started', updateMessage: 'update rolled back' }), [aTask()]).phase).toBe(
      'failed',
    );
    expect(assess(aService({ updateState: 'paused', updateMessage: 'update paused due to failure' }), [aTask()])).toEqual({
      phase: 'failed',
      reason: 'the update paused: update paused due to failure',
    });
  });

  it('fails when another deployment replaced this one', () => {
    expect(assess(aService({ labels: { [DEPLOYMENT_LABEL]: 'dep-later' } }), [])).toEqual({
      phase: 'failed',
      reason: 'the service now runs another deployment (dep-later)',
    });
  });

  it('handles global mode and jobs', () => {
    const global: RolloutTarget = { mode: 'global' };
    expect(assess(aService(), [], global).phase).toBe('waiting');
    expect(assess(aService(), [aTask(), aTask({ state: 'starting' })], global).phase).toBe('waiting');
    expect(assess(aService(), [aTask(), aTask()], global)).toEqual({ phase: 'done', summary: '2/2 tasks running' });
    const job: RolloutTarget = { mode: 'job', completions: 2 };
    expect(assess(aService(), [aTask({ state: 'complete', desiredState: 'complete' })], job)).toEqual({
      phase: 'waiting',
      summary: '1/2 tasks complete',
    });
  });
});

describe('monitorWindowMs', () => {
  const spec = (UpdateConfig?: ServiceSpec['UpdateConfig']): ServiceSpec =>
    ({ Name: 'web', Labels: {}, TaskTemplate: { ContainerSpec: { Image: 'busybox' } }, UpdateConfig }) as ServiceSpec;
  it("reads the spec's update monitor, Skiff's 500 ms default when it has none", () => {
    expect(monitorWindowMs(spec({ Parallelism: 1, Monitor: 2_000_000_000 }))).toBe(2000);
    expect(monitorWindowMs(spec())).toBe(500);
  });
});

describe('rolloutTarget', () => {
  const spec = (Mode: ServiceSpec['Mode']): ServiceSpec =>
    ({ Name: 'web', Labels: {}, TaskTemplate: { ContainerSpec: { Image: 'busybox' } }, Mode }) as ServiceSpec;
  it('reads the mode of a service spec', () => {
    expect(rolloutTarget(spec({ Replicated: { Replicas: 3 } }))).toEqual({ mode: 'replicated', replicas: 3 });
    expect(rolloutTarget(spec(undefined))).toEqual({ mode: 'replicated', replicas: 1 });
    expect(rolloutTarget(spec({ Global: {} }))).toEqual({ mode: 'global' });
    expect(rolloutTarget(spec({ ReplicatedJob: { TotalCompletions: 4 } }))).toEqual({ mode: 'job', completions: 4 });
    expect(rolloutTarget(spec({ GlobalJob: {} }))).toEqual({ mode: 'job', completions: 1 });
  });
});
