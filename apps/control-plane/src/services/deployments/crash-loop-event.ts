/** What a crash loop's event needs (crash-loops.ts makes it). */
export interface CrashLoopEvent {
  applicationId: string;
  appName: string;
  /** Null for the platform host. */
  serverId: string | null;
  deploymentId: string;
  exits: number;
  windowSeconds: number;
  reason: string;
  /** The last lines of the failing task's log, oldest first (the application's output: show, never log). */
  logLines: string[];
  /** The rollback deployment queued, or why there was none (`rollbackActive` off: null). */
  rollback: { deploymentId: string } | { none: string } | null;
}
