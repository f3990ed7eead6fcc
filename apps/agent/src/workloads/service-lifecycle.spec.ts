import { describe, expect, it } from 'vitest';
import type { ServiceSpec, TaskInfo } from '../docker/driver.js';
import {
  LifecycleRefused,
  RELOAD_LABEL,
  REPLICAS_LABEL,
  STOP_CONSTRAINT,
  isStopped,
  readReloaded,
  readRunning,
  readStopped,
  reloadedSpec,
  startedSpec,
  stoppedSpec,
} from './service-lifecycle.js';

function aSpec(overrides: Partial<ServiceSpec> = {}): ServiceSpec {
  return {
    Name: 'web',
    Labels: { 'skiff.managed': 'true', 'skiff.id': 'app1', team: 'a' },
    TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Env: ['A=1'] }, ForceUpdate: 3 },
    Mode: { Replicated: { Replicas: 3 } },
    ...overrides,
  };
}

const globalSpec = (constraints?: string[]) =>
  aSpec({
    Mode: { Global: {} },
    TaskTemplate: { ContainerSpec: { Image: 'busybox:latest' }, ...(constraints ? { Placement: { Constraints: constraints } } : {}) },
  });

let ids = 0;
function aTask(overrides: Partial<TaskInfo> = {}): TaskInfo {
  ids++;
  return {
    id: `task${ids}`,
    slot: ids,
    nodeId: 'node1',
    state: 'running',
    desiredState: 'running',
    message: 'started',
    error: null,
    exitCode: null,
    containerId: null,
    image: 'busybox:latest',
    labels: {},
    forceUpdate: 3,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}

describe('stop and start of a replicated service', () => {
  it('scales to 0 keeping the count in a label, and back', () => {
    const stopped = stoppedSpec(aSpec())!;
    expect(stopped.Mode).toEqual({ Replicated: { Replicas: 0 } });
    expect(stopped.Labels).toEqual({ 'skiff.managed': 'true', 'skiff.id': 'app1', team: 'a', [REPLICAS_LABEL]: '3' });
    expect(stopped.TaskTemplate).toEqual(aSpec().TaskTemplate);
    expect(isStopped(stopped)).toBe(true);
    const started = startedSpec(stopped)!;
    expect(started).toEqual(aSpec());
  });

  it('leaves a stopped service stopped and a running one running (idempotent)', () => {
    const stopped = stoppedSpec(aSpec())!;
    expect(stoppedSpec(stopped)).toBeNull();
    expect(startedSpec(aSpec())).toBeNull();
  });

  it('takes a service without Mode as one replica', () => {
    const stopped = stoppedSpec(aSpec({ Mode: undefined }))!;
    expect(stopped.Mode).toEqual({ Replicated: { Replicas: 0 } });
    expect(stopped.Labels[REPLICAS_LABEL]).toBe('1');
  });

  it('starts one replica when no usable count was kept', () => {
    for (const kept of [undefined, '0', '-2', 'many', '1e3']) {
      const labels: Record<string, string> = { 'skiff.managed': 'true' };
      if (kept !== undefined) labels[REPLICAS_LABEL] = kept;
      const started = startedSpec(aSpec({ Labels: labels, Mode: { Replicated: { Replicas: 0 } } }))!;
      expect(started.Mode).toEqual({ Replicated: { Replicas: 1 } });
      expect(started.Labels).toEqual({ 'skiff.managed': 'true' });
    }
  });
});

describe('stop and start of a global service', () => {
  it('adds a constraint no node matches, and removes it again', () => {
    const stopped = stoppedSpec(globalSpec(['node.role==manager']))!;
    expect(stopped.TaskTemplate.Placement?.Constraints).toEqual(['node.role==manager', STOP_CONSTRAINT]);
    expect(stopped.Mode).toEqual({ Global: {} });
    expect(stoppedSpec(stopped)).toBeNull();
    expect(startedSpec(stopped)!.TaskTemplate.Placement?.Constraints).toEqual(['node.role==manager']);
    expect(startedSpec(globalSpec())).toBeNull();
  });
});

describe('jobs', () => {
  it('are refused with a reason', () => {
    const job = aSpec({ Mode: { ReplicatedJob: { MaxConcurrent: 1 } } });
    expect(() => stoppedSpec(job)).toThrow(LifecycleRefused);
    expect(() => startedSpec(job)).toThrow(/runs as a job/);
    expect(() => reloadedSpec(job, 'cmd1')).toThrow(/runs as a job/);
  });
});

describe('reload', () => {
  it('raises ForceUpdate by one and records the command', () => {
    const reloaded = reloadedSpec(aSpec(), 'cmd1')!;
    expect(reloaded.TaskTemplate.ForceUpdate).toBe(4);
    expect(reloaded.Labels[RELOAD_LABEL]).toBe('cmd1');
    expect(reloaded.TaskTemplate.ContainerSpec).toEqual(aSpec().TaskTemplate.ContainerSpec);
    expect(reloadedSpec(aSpec({ TaskTemplate: { ContainerSpec: { Image: 'x' } } }), 'c')!.TaskTemplate.ForceUpdate).toBe(1);
  });

  it('does not bump twice for the same command, and leaves a stopped service alone', () => {
    const reloaded = reloadedSpec(aSpec(), 'cmd1')!;
    expect(reloadedSpec(reloaded, 'cmd1')).toBeNull();
    expect(reloadedSpec(reloaded, 'cmd2')!.TaskTemplate.ForceUpdate).toBe(5);
    expect(reloadedSpec(stoppedSpec(aSpec())!, 'cmd1')).toBeNull();
  });
});

describe('reading the tasks', () => {
  it('is stopped once no task is live', () => {
    expect(readStopped([aTask({ state: 'shutdown', desiredState: 'shutdown' }), aTask({ state: 'failed' })]).phase).toBe('done');
    expect(readStopped([])).toEqual({ phase: 'done', summary: 'no task runs' });
    expect(readStopped([aTask({ desiredState: 'shutdown' }), aTask({ state: 'shutdown' })])).toEqual({
      phase: 'waiting',
      summary: '1 task(s) still running',
    });
  });

  it('is running with as many running tasks as replicas; a new failed task is the reason', () => {
    const spec = aSpec({ Mode: { Replicated: { Replicas: 2 } } });
    const old = aTask({ state: 'failed', desiredState: 'shutdown', error: 'old failure' });
    expect(readRunning(spec, [aTask(), old], new Set([old.id]))).toEqual({ phase: 'waiting', summary: '1/2 tasks running' });
    expect(readRunning(spec, [aTask(), aTask(), old], new Set([old.id])).phase).toBe('done');
    const rejected = aTask({ slot: 7, state: 'rejected', desiredState: 'shutdown', error: 'No such image: x:1' });
    expect(readRunning(spec, [aTask(), rejected], new Set())).toEqual({ phase: 'failed', reason: 'task 7 rejected: No such image: x:1' });
    const crashed = aTask({ slot: 8, state: 'failed', error: null, message: 'started', exitCode: 2 });
    expect(readRunning(spec, [crashed], new Set())).toEqual({ phase: 'failed', reason: 'task 8 failed: started (exit code 2)' });
  });

  it('is running in global mode when every wanted task runs', () => {
    expect(readRunning(globalSpec(), [], new Set()).phase).toBe('waiting');
    expect(readRunning(globalSpec(), [aTask({ state: 'starting' })], new Set()).phase).toBe('waiting');
    const task = aTask();
    expect(readRunning(globalSpec(), [task], new Set())).toEqual({ phase: 'done', summary: '1/1 tasks running', settling: [task.id] });
  });

  it('is reloaded when the tasks of the new ForceUpdate run and the update is over', () => {
    const spec = reloadedSpec(aSpec({ Mode: { Replicated: { Replicas: 1 } } }), 'cmd1')!;
    const old = aTask({ forceUpdate: 3 });
    const fresh = aTask({ forceUpdate: 4 });
    expect(readReloaded(spec, 'updating', null, [old])).toEqual({ phase: 'waiting', summary: '0/1 tasks running' });
    expect(readReloaded(spec, 'updating', null, [fresh, old])).toEqual({ phase: 'waiting', summary: '1/1 tasks running, update updating' });
    expect(readReloaded(spec, 'completed', null, [fresh, old]).phase).toBe('done');
    expect(readReloaded(spec, null, null, [fresh]).phase).toBe('done');
  });

  it('fails a reload on a failed new task, a paused update or a rollback', () => {
    const spec = reloadedSpec(aSpec(), 'cmd1')!;
    const failedTask = aTask({ slot: 2, forceUpdate: 4, state: 'failed', error: 'task: non-zero exit (1)', exitCode: 1 });
    expect(readReloaded(spec, 'updating', null, [failedTask])).toEqual({ phase: 'failed', reason: 'task 2 failed: task: non-zero exit (1) (exit code 1)' });
    expect(readReloaded(spec, 'paused', 'update paused due to failure', [])).toEqual({
      phase: 'failed',
      reason: 'the update paused: update paused due to failure',
    });
    expect(readReloaded(spec, 'rollback_completed', null, []).phase).toBe('failed');
  });

  it('reads a stopped service as reloaded: nothing to restart', () => {
    expect(readReloaded(stoppedSpec(aSpec())!, null, null, []).phase).toBe('done');
  });
});
