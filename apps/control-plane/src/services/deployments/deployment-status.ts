import type { Db, DeploymentStatus } from '@skiff/db';
import { lastStopOrStart } from '../../agents/outbound/command-records.js';
import { workloadKey } from '../../agents/outbound/workload-key.js';
import { DEPLOYED_KINDS, type WorkloadOwner } from './workloads.js';

/**
 * How a deployment's status moves (ARCHITECTURE.md "Status"): queued → running → done,
 * error or cancelled; a deploy can also end straight from queued (a failed pull, an expired
 * command, a cancel). Ended deployments never move again, so a late or repeated report
 * cannot reopen one.
 */
const NEXT: Record<DeploymentStatus, readonly DeploymentStatus[]> = {
  queued: ['running', 'done', 'error', 'cancelled'],
  running: ['done', 'error', 'cancelled'],
  done: [],
  error: [],
  cancelled: [],
};

export const canMove = (from: DeploymentStatus, to: DeploymentStatus) => NEXT[from].includes(to);

export const isFinished = (status: DeploymentStatus) => NEXT[status].length === 0;

/**
 * The application's `applicationStatus` once one of its deployments reaches `status`;
 * undefined leaves it as it is (queued: nothing runs yet; cancelled: a deployment cancelled
 * while queued never moved it, and one cancelled while running gives it back the status it
 * had before, as `applicationStatusAfterCancel` below works out).
 */
export function applicationStatusFor(status: DeploymentStatus): 'running' | 'done' | 'error' | undefined {
  switch (status) {
    case 'running':
      return 'running';
    case 'done':
      return 'done';
    case 'error':
      return 'error';
    default:
      return undefined;
  }
}

/**
 * The workload's status once its running deployment `deploymentId` was cancelled: the agent
 * put the previous version back (or removed the service this deployment created), so the
 * workload (an application or a compose stack) is as the last thing that ended before left it:
 *
 * - the newest other deployment that ended `done` or `error` → `done` / `error`;
 * - a stop that succeeded after it → `idle` (the previous spec has no running task); a start
 *   that succeeded after it → `done`;
 * - no such deployment → `idle` (nothing was deployed before: the service is removed).
 *
 * Used when a deployment moves from `running` to `cancelled` (when the control plane ends
 * it: deployment-control.ts, and when the agent reports it: agents/inbound/deployment-reports.ts
 * and agents/outbound/kinds/deployment-result.ts). A deployment cancelled while queued never
 * moved the application, so it is left as it is.
 */
export async function applicationStatusAfterCancel(tx: Db, owner: WorkloadOwner, deploymentId: string): Promise<'idle' | 'done' | 'error'> {
  const deployment = await tx
    .selectFrom('deployments')
    .select(['status', 'finishedAt'])
    .where(DEPLOYED_KINDS[owner.kind].deploymentColumn, '=', owner.id)
    .where('id', '!=', deploymentId)
    .where('status', 'in', ['done', 'error'])
    .where('finishedAt', 'is not', null)
    .orderBy('finishedAt', 'desc')
    .limit(1)
    .executeTakeFirst();
  const lifecycle = await lastStopOrStart(tx, workloadKey(owner.kind, owner.id));
  if (!deployment) return 'idle';
  if (lifecycle && lifecycle.finishedAt > deployment.finishedAt!) return lifecycle.stopped ? 'idle' : 'done';
  return deployment.status === 'done' ? 'done' : 'error';
}

/** Longest log kept per deployment, in characters: the newest lines win. */
export const LOG_CAP = 256 * 1024;
/** Longest single line kept; longer lines are cut and marked. */
export const LINE_CAP = 16 * 1024;

/**
 * The log with `lines` appended, each ending in a line break, keeping at most `cap`
 * characters: the oldest whole lines are dropped first.
 */
export function appendLog(log: string, lines: readonly string[], cap = LOG_CAP): string {
  if (lines.length === 0) return log;
  const added = lines
    .map((line) => {
      const flat = line.replace(/\r?\n|\r/g, ' ');
      return (flat.length > LINE_CAP ? `${flat.slice(0, LINE_CAP)} [line cut]` : flat) + '\n';
    })
    .join('');
  const whole = log + added;
  if (whole.length <= cap) return whole;
  const tail = whole.slice(whole.length - cap);
  const firstBreak = tail.indexOf('\n');
  // Drop the partly kept first line, unless it is the only line.
  return firstBreak >= 0 && firstBreak < tail.length - 1 ? tail.slice(firstBreak + 1) : tail;
}
