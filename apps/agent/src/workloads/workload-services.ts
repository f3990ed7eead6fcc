/**
 * What the workload commands (stop, start, reload, remove) and compose stacks share: the
 * Swarm services that make up a workload, and waiting for their tasks with a deadline.
 *
 * A workload's services are found by label (`skiff.managed=true`, `skiff.kind`, `skiff.id`),
 * not by name, so a service deployed under an earlier appName is still found, and a
 * service of the same name that belongs to something else is never touched.
 */
import { WorkloadKind, type WorkloadRef } from '@skiff/proto';
import { AbandonedError, pause } from '../abort/abandoned.js';
import { MANAGED_LABEL, type DockerDriver, type ServiceInfo, type ServiceSpec } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { failed, succeeded, type CommandContext, type CommandOutcome } from '../pipeline/handler.js';
import type { TaskReading } from './service-lifecycle.js';

/** How long and how often a command looks at a workload's tasks. */
export interface TaskWaitOptions {
  now?: () => Date;
  /** Between two looks at the tasks. Default 500 ms. */
  pollIntervalMs?: number;
  /** Longest wait for the tasks when the command's deadline allows more. Default 5 minutes. */
  waitTimeoutMs?: number;
  /** How long started tasks must keep running to count as started. Default 2 s. */
  settleMs?: number;
}

/** What the workload commands act through: the engine, and how they wait for its tasks. */
export interface WorkloadDeps extends TaskWaitOptions {
  driver: DockerDriver;
}

/** The `skiff.kind` label of the workload kinds that are Swarm services. */
const SERVICE_KINDS: Partial<Record<WorkloadKind, string>> = {
  [WorkloadKind.WORKLOAD_KIND_APPLICATION]: 'application',
  [WorkloadKind.WORKLOAD_KIND_CACHE]: 'cache',
  // Swarm stacks; Compose projects have no service and go through compose/lifecycle.ts.
  [WorkloadKind.WORKLOAD_KIND_COMPOSE]: 'compose',
};

/** The `skiff.kind` label of the services of a workload kind, or undefined when its workloads are no Swarm services. */
export function serviceKindOf(kind: WorkloadKind): string | undefined {
  return SERVICE_KINDS[kind];
}

/** The Skiff services of the workload, by label. */
export function workloadServices(driver: DockerDriver, workload: WorkloadRef): Promise<ServiceInfo[]> {
  return driver.servicesByLabel({ [MANAGED_LABEL]: 'true', 'skiff.kind': SERVICE_KINDS[workload.kind] ?? '', 'skiff.id': workload.id });
}

/**
 * Writes `change` to the service: the spec it has afterwards (what `change` answered, or the
 * current one when it answered null) and whether it was written; null when the service is
 * gone. Errors of `change` (LifecycleRefused) pass through.
 */
export async function changeService(
  driver: DockerDriver,
  name: string,
  change: (spec: ServiceSpec) => ServiceSpec | null,
): Promise<{ spec: ServiceSpec; changed: boolean } | null> {
  const seen: { spec?: ServiceSpec } = {};
  const written = await driver.updateService(name, (current) => {
    const next = change(current);
    seen.spec = next ?? current;
    return next;
  });
  return written && seen.spec ? { spec: seen.spec, changed: written.changed } : null;
}

/**
 * Looks (`look`) until it reads done or failed, or the wait ends: at the command's deadline,
 * and never later than `waitTimeoutMs` from now. A `done` that names the running tasks it
 * counts on holds only once the same tasks have kept running for `settleMs` (a task that
 * crashes right after its start fails the command instead). An engine that does not answer
 * for a while is looked at again; the deadline ends a longer outage.
 */
export async function waitForTasks(
  context: CommandContext,
  deps: TaskWaitOptions,
  /** What is waited for, in a failure's reason and in the success's log line; or each said apart. */
  what: string | { failure: string; done: string },
  look: () => Promise<TaskReading>,
): Promise<CommandOutcome> {
  const done = typeof what === 'string' ? `${what}: done` : what.done;
  if (typeof what !== 'string') what = what.failure;
  const now = deps.now ?? (() => new Date());
  const pollIntervalMs = deps.pollIntervalMs ?? 500;
  const waitUntil = Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + (deps.waitTimeoutMs ?? 5 * 60_000));
  const settleMs = deps.settleMs ?? 2_000;
  let summary = 'no look at the tasks yet';
  // The running tasks a `done` counted on, and since when they have run.
  const settling: { tasks: string | null; since: number } = { tasks: null, since: 0 };
  for (;;) {
    if (context.signal.aborted) throw new AbandonedError();
    try {
      const reading = await look();
      if (reading.phase === 'failed') return failed(`${what}: ${reading.reason}`);
      summary = reading.summary;
      if (reading.phase === 'done') {
        const tasks = reading.settling?.join(',');
        if (tasks === undefined || (settling.tasks === tasks && now().getTime() - settling.since >= settleMs)) {
          context.log.info({ summary: reading.summary }, done);
          return succeeded();
        }
        if (settling.tasks !== tasks) Object.assign(settling, { tasks, since: now().getTime() });
        summary = `${reading.summary}, making sure they keep running`;
      } else {
        settling.tasks = null;
      }
    } catch (err) {
      if (!(err instanceof DockerError)) throw err;
      summary = `the engine did not answer: ${err.message}`;
      context.log.warn({ err: err.message }, 'could not look at the tasks');
    }
    if (now().getTime() >= waitUntil) {
      const byDeadline = context.deadline !== null && waitUntil >= context.deadline.getTime();
      return failed(`${what}: not done before ${byDeadline ? "the command's deadline" : 'the wait timed out'} (${summary})`);
    }
    await pause(Math.min(pollIntervalMs, Math.max(0, waitUntil - now().getTime())), context.signal);
  }
}
