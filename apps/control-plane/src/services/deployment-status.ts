import type { DeploymentStatus } from '@skiff/db';

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
 * had before, as deployment-control.ts `applicationStatusAfterCancel` works out).
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
