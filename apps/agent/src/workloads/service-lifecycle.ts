/**
 * Stop, start and reload of a Swarm service, as pure changes of its spec and pure readings
 * of its tasks. The handlers (stop-workload.ts, start-workload.ts, reload-workload.ts) write
 * the changes through DockerDriver.updateService and poll the tasks with these readings.
 *
 * - Stop: a replicated service is scaled to 0 and its replica count kept in the service
 *   label `skiff.replicas`; a global service (which cannot be scaled, and whose mode cannot
 *   change) gets the placement constraint STOP_CONSTRAINT, which no node matches. Jobs run
 *   to their end and are not stopped.
 * - Start: the reverse; without a kept count, 1 replica.
 * - Reload: TaskTemplate.ForceUpdate + 1 (the engine replaces every task, following the
 *   service's update config) and the service label `skiff.reload=<commandId>`, so a run of
 *   the same command after an agent restart does not restart the tasks a second time. A
 *   stopped service stays stopped.
 *
 * Every change answers null when the service is already as wanted: the handlers are
 * idempotent because of it.
 */
import type { ServiceSpec, TaskInfo, TaskState } from '../docker/driver.js';

/** Service label: the replica count a stop scaled down from. */
export const REPLICAS_LABEL = 'skiff.replicas';
/** Service label: the command id of the last reload written to the service. */
export const RELOAD_LABEL = 'skiff.reload';
/** A constraint no node matches (node ids never contain '-'): a stopped global service. */
export const STOP_CONSTRAINT = 'node.id==skiff-stopped';

/** The service cannot be stopped or started (a job). */
export class LifecycleRefused extends Error {
  override name = 'LifecycleRefused';
}

type Mode = 'replicated' | 'global' | 'job';

function modeOf(spec: ServiceSpec): Mode {
  const mode = spec.Mode;
  if (!mode || 'Replicated' in mode) return 'replicated';
  if ('Global' in mode) return 'global';
  return 'job';
}

const replicasOf = (spec: ServiceSpec): number =>
  spec.Mode && 'Replicated' in spec.Mode ? (spec.Mode.Replicated.Replicas ?? 1) : 1;

const constraintsOf = (spec: ServiceSpec): string[] => spec.TaskTemplate.Placement?.Constraints ?? [];

function withReplicas(spec: ServiceSpec, replicas: number, labels: Record<string, string>): ServiceSpec {
  return { ...spec, Labels: labels, Mode: { Replicated: { ...(spec.Mode && 'Replicated' in spec.Mode ? spec.Mode.Replicated : {}), Replicas: replicas } } };
}

function withConstraints(spec: ServiceSpec, constraints: string[]): ServiceSpec {
  const placement = { ...spec.TaskTemplate.Placement, Constraints: constraints };
  return { ...spec, TaskTemplate: { ...spec.TaskTemplate, Placement: placement } };
}

/** Whether the spec is one a stop wrote (or scaled to 0 some other way). */
export function isStopped(spec: ServiceSpec): boolean {
  const mode = modeOf(spec);
  if (mode === 'replicated') return replicasOf(spec) === 0;
  if (mode === 'global') return constraintsOf(spec).includes(STOP_CONSTRAINT);
  return false;
}

/** The spec of the stopped service, or null when it is stopped already. */
export function stoppedSpec(spec: ServiceSpec): ServiceSpec | null {
  switch (modeOf(spec)) {
    case 'replicated': {
      const replicas = replicasOf(spec);
      if (replicas === 0) return null;
      return withReplicas(spec, 0, { ...spec.Labels, [REPLICAS_LABEL]: String(replicas) });
    }
    case 'global':
      return isStopped(spec) ? null : withConstraints(spec, [...constraintsOf(spec), STOP_CONSTRAINT]);
    case 'job':
      throw new LifecycleRefused(`service ${spec.Name} runs as a job, which runs to its end: it cannot be stopped`);
  }
}

/** The spec of the started service, or null when it runs already. */
export function startedSpec(spec: ServiceSpec): ServiceSpec | null {
  switch (modeOf(spec)) {
    case 'replicated': {
      if (replicasOf(spec) > 0) return null;
      const { [REPLICAS_LABEL]: kept, ...labels } = spec.Labels;
      const replicas = kept !== undefined && /^[1-9]\d{0,5}$/.test(kept) ? Number(kept) : 1;
      return withReplicas(spec, replicas, labels);
    }
    case 'global':
      return isStopped(spec) ? withConstraints(spec, constraintsOf(spec).filter((c) => c !== STOP_CONSTRAINT)) : null;
    case 'job':
      throw new LifecycleRefused(`service ${spec.Name} runs as a job: deploy it again to run it again`);
  }
}

/**
 * The spec that restarts every task, or null when this command did so already, or when the
 * service is stopped (nothing to restart).
 */
export function reloadedSpec(spec: ServiceSpec, commandId: string): ServiceSpec | null {
  if (spec.Labels[RELOAD_LABEL] === commandId || isStopped(spec)) return null;
  if (modeOf(spec) === 'job') throw new LifecycleRefused(`service ${spec.Name} runs as a job: deploy it again to run it again`);
  return {
    ...spec,
    Labels: { ...spec.Labels, [RELOAD_LABEL]: commandId },
    TaskTemplate: { ...spec.TaskTemplate, ForceUpdate: (spec.TaskTemplate.ForceUpdate ?? 0) + 1 },
  };
}

export type TaskReading =
  | {
      phase: 'waiting' | 'done';
      summary: string;
      /**
       * The running tasks a `done` counts on, when they must keep running for a while to count
       * (a task that crashes right after it started was `running` for a moment).
       */
      settling?: string[];
    }
  | { phase: 'failed'; reason: string };

/** States of a task that has not ended: its container may run, or is about to. */
const LIVE: ReadonlySet<TaskState> = new Set(['new', 'allocated', 'pending', 'assigned', 'accepted', 'preparing', 'ready', 'starting', 'running']);
const FAILED: ReadonlySet<TaskState> = new Set(['failed', 'rejected']);
const UPDATE_FAILED = new Set(['paused', 'rollback_started', 'rollback_paused', 'rollback_completed']);

const isRunning = (t: TaskInfo) => t.state === 'running' && t.desiredState === 'running';

function taskName(task: TaskInfo): string {
  return task.slot !== null ? `task ${task.slot}` : `task ${task.id.slice(0, 12)}`;
}

function failureOf(task: TaskInfo): string {
  const what = task.error ?? (task.message || task.state);
  const exit = task.exitCode !== null && task.exitCode !== 0 ? ` (exit code ${task.exitCode})` : '';
  return `${taskName(task)} ${task.state}: ${what}${exit}`;
}

/** Stopped: no task of the service is live any more. */
export function readStopped(tasks: readonly TaskInfo[]): TaskReading {
  const live = tasks.filter((t) => LIVE.has(t.state));
  if (live.length === 0) return { phase: 'done', summary: 'no task runs' };
  return { phase: 'waiting', summary: `${live.length} task(s) still ${[...new Set(live.map((t) => t.state))].join('/')}` };
}

/**
 * Running: as many tasks running as the spec wants (replicated), or every task the engine
 * wants running runs, at least one (global). A task that was not there before the change
 * (`known`) and failed is the reason it did not start.
 */
export function readRunning(spec: ServiceSpec, tasks: readonly TaskInfo[], known: ReadonlySet<string>): TaskReading {
  const failed = tasks.find((t) => !known.has(t.id) && FAILED.has(t.state));
  if (failed) return { phase: 'failed', reason: failureOf(failed) };
  const reading = countRunning(spec, tasks);
  return reading.phase === 'done' ? { ...reading, settling: tasks.filter(isRunning).map((t) => t.id).sort() } : reading;
}

/**
 * Reloaded: the tasks of the new ForceUpdate run (as many as wanted) and the engine's update
 * of the service is over; a failed task of the new ForceUpdate, a paused update or a rollback
 * is a failure.
 */
export function readReloaded(spec: ServiceSpec, updateState: string | null, updateMessage: string | null, tasks: readonly TaskInfo[]): TaskReading {
  if (isStopped(spec)) return { phase: 'done', summary: 'the service is stopped: nothing to restart' };
  const forceUpdate = spec.TaskTemplate.ForceUpdate ?? 0;
  const fresh = tasks.filter((t) => t.forceUpdate === forceUpdate);
  const failed = fresh.find((t) => FAILED.has(t.state));
  if (failed) return { phase: 'failed', reason: failureOf(failed) };
  if (updateState !== null && UPDATE_FAILED.has(updateState)) {
    const why = updateState === 'paused' ? 'the update paused' : 'the engine rolled the update back';
    return { phase: 'failed', reason: updateMessage ? `${why}: ${updateMessage}` : why };
  }
  const reading = countRunning(spec, fresh);
  if (reading.phase === 'done' && updateState !== null && updateState !== 'completed') {
    return { phase: 'waiting', summary: `${reading.summary}, update ${updateState}` };
  }
  return reading;
}

function countRunning(spec: ServiceSpec, tasks: readonly TaskInfo[]): TaskReading {
  const running = tasks.filter(isRunning).length;
  if (modeOf(spec) === 'global') {
    const wanted = tasks.filter((t) => t.desiredState === 'running').length;
    const summary = `${running}/${Math.max(wanted, 1)} tasks running`;
    return { phase: wanted > 0 && running >= wanted ? 'done' : 'waiting', summary };
  }
  const wanted = replicasOf(spec);
  return { phase: running >= wanted ? 'done' : 'waiting', summary: `${running}/${wanted} tasks running` };
}
