/**
 * Whether a deployment's rollout has finished, failed or is still under way, from one look
 * at the service and its tasks. Pure. The tasks of this rollout are those labelled
 * `skiff.deployment=<deploymentId>` (see deploy-spec.ts).
 *
 * - Failed: a task of this version failed or was rejected (the task's error is the reason);
 *   the update paused or the engine rolled back; or the service no longer carries this
 *   deployment (rolled back, or replaced by another deployment).
 * - Done: replicated mode, as many tasks of this version running as replicas wanted;
 *   global mode, every task of this version that should run is running; jobs, enough of
 *   them completed. No task of another version is still meant to run (the old ones are shut
 *   down or shutting down), the engine's update (if any) completed, and each running task of
 *   this version has run for the update monitor window (`UpdateConfig.Monitor`, 500 ms unless
 *   the workload sets it). Swarm reports a task with a health check `running` only once it is
 *   healthy, and starts the update's monitor window then.
 *
 * The rule, so that a deployment never says done and then fails: a task that fails within
 * the window fails the deployment (the engine rolls an update back; a first deploy has no
 * engine monitor, so the window is counted here from the task's last state change). After
 * the window the engine no longer rolls back, and a task that fails later is restarted by
 * the restart policy like any crash: the deployment stays done.
 */
import { DEFAULT_UPDATE_MONITOR } from '@skiff/domain';
import type { ServiceInfo, ServiceSpec, TaskInfo } from '../docker/driver.js';
import { DEPLOYMENT_LABEL } from './deploy-spec.js';

export type RolloutTarget =
  | { mode: 'replicated'; replicas: number }
  | { mode: 'global' }
  | { mode: 'job'; completions: number };

export type RolloutAssessment =
  | { phase: 'waiting' | 'done'; summary: string }
  | { phase: 'failed'; reason: string };

const FAILED_STATES = new Set(['failed', 'rejected']);
const ENDED_STATES = new Set(['complete', 'shutdown', 'failed', 'rejected', 'remove', 'orphaned']);
const UPDATE_FAILED = new Set(['paused', 'rollback_started', 'rollback_paused', 'rollback_completed']);

export function rolloutTarget(spec: ServiceSpec): RolloutTarget {
  const mode = spec.Mode;
  if (!mode || 'Replicated' in mode) return { mode: 'replicated', replicas: mode?.Replicated.Replicas ?? 1 };
  if ('Global' in mode) return { mode: 'global' };
  if ('ReplicatedJob' in mode) return { mode: 'job', completions: mode.ReplicatedJob.TotalCompletions ?? mode.ReplicatedJob.MaxConcurrent ?? 1 };
  return { mode: 'job', completions: 1 };
}

/** The update monitor window of a spec, in milliseconds. */
export function monitorWindowMs(spec: ServiceSpec): number {
  const nanoseconds = spec.UpdateConfig?.Monitor ?? DEFAULT_UPDATE_MONITOR;
  return Math.max(0, nanoseconds / 1_000_000);
}

export function assessRollout(input: {
  deploymentId: string;
  target: RolloutTarget;
  service: ServiceInfo;
  tasks: readonly TaskInfo[];
  /** How long each new task must have run (ms); 0 when not given. */
  monitorMs?: number;
  now?: Date;
}): RolloutAssessment {
  const { deploymentId, target, service } = input;
  const tasks = input.tasks.filter((t) => t.labels[DEPLOYMENT_LABEL] === deploymentId);
  const failedTask = tasks.find((t) => FAILED_STATES.has(t.state));
  const taskReason = failedTask ? taskFailure(failedTask) : null;
  const update = service.updateState;

  const current = service.labels[DEPLOYMENT_LABEL];
  if (current !== deploymentId) {
    if (update?.startsWith('rollback')) return { phase: 'failed', reason: rolledBack(service, taskReason) };
    return { phase: 'failed', reason: `the service now runs another deployment (${current ?? 'none'})` };
  }
  if (taskReason) return { phase: 'failed', reason: taskReason };
  if (update && UPDATE_FAILED.has(update)) {
    return {
      phase: 'failed',
      reason: update === 'paused' ? `the update paused: ${service.updateMessage ?? 'no reason given'}` : rolledBack(service, null),
    };
  }
  const settled = update === null || update === 'completed';

  if (target.mode === 'job') {
    const complete = tasks.filter((t) => t.state === 'complete').length;
    const summary = `${complete}/${target.completions} tasks complete`;
    return { phase: complete >= target.completions && settled ? 'done' : 'waiting', summary };
  }
  const runningTasks = tasks.filter((t) => t.state === 'running' && t.desiredState === 'running');
  const running = runningTasks.length;
  const wanted = target.mode === 'replicated' ? target.replicas : tasks.filter((t) => t.desiredState === 'running').length;
  const enough = target.mode === 'replicated' ? running >= wanted : wanted > 0 && running >= wanted;
  const summary = `${running}/${target.mode === 'replicated' ? wanted : Math.max(wanted, 1)} tasks running`;
  const oldServing = input.tasks.some(
    (t) => t.labels[DEPLOYMENT_LABEL] !== deploymentId && t.desiredState === 'running' && !ENDED_STATES.has(t.state),
  );
  const now = (input.now ?? new Date()).getTime();
  const monitorMs = input.monitorMs ?? 0;
  const watched = runningTasks.every((t) => {
    const since = Date.parse(t.updatedAt);
    return Number.isNaN(since) || now - since >= monitorMs;
  });
  return { phase: enough && settled && !oldServing && watched ? 'done' : 'waiting', summary };
}

export function taskFailure(task: TaskInfo): string {
  const what = task.error ?? task.message ?? task.state;
  const exit = task.exitCode !== null && task.exitCode !== 0 && !what.includes('exit') ? ` (exit code ${task.exitCode})` : '';
  return `task ${task.slot ?? task.id.slice(0, 12)} ${task.state}: ${what}${exit}`;
}

function rolledBack(service: ServiceInfo, taskReason: string | null): string {
  const parts = ['the engine rolled back to the previous version'];
  if (service.updateMessage) parts.push(service.updateMessage);
  if (taskReason) parts.push(taskReason);
  return parts.join(': ');
}
