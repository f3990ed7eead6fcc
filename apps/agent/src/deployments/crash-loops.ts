/**
 * Crash loops: an application's service whose tasks keep exiting after they started. The
 * engine restarts them (restart policy `any`, 5 s apart) and shows the service as running
 * in between, so neither the deploy (done once its tasks ran for the monitor window, see
 * deployments/rollout.ts) nor `docker service ls` says the application is down.
 *
 * The watcher looks at every Skiff application service every `intervalMs`. A crash loop is
 * `exits` tasks of the deployment the service runs that ended (failed, or completed: a
 * service is not a job) after their container had started, within `windowMs`. It is
 * reported once per deployment (CrashLoop, with the last `logLines` lines of the newest
 * failed task's container); a new deployment of the service may be reported again.
 */
import { timestampFromDate, type CrashLoop } from '@skiff/proto';
import type { Logger } from 'pino';
import { MANAGED_LABEL, type DockerDriver, type ServiceInfo, type TaskInfo } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { DEPLOYMENT_LABEL } from './deploy-spec.js';
import { taskFailure } from './rollout.js';

export interface CrashLoopRule {
  exits: number;
  windowMs: number;
}

export const DEFAULT_CRASH_LOOP_RULE: CrashLoopRule = { exits: 3, windowMs: 120_000 };

const EXITED = new Set(['failed', 'complete']);

/** The tasks that make the service's current deployment a crash loop (newest first), or null. Pure. */
export function crashLoopOf(service: ServiceInfo, tasks: readonly TaskInfo[], rule: CrashLoopRule, now: Date): TaskInfo[] | null {
  const deploymentId = service.labels[DEPLOYMENT_LABEL];
  if (!deploymentId || service.replicas === null) return null;
  const since = now.getTime() - rule.windowMs;
  const exited = tasks
    .filter((t) => t.labels[DEPLOYMENT_LABEL] === deploymentId && EXITED.has(t.state) && t.containerId !== null)
    .filter((t) => Date.parse(t.updatedAt) >= since)
    .sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt));
  return exited.length >= rule.exits ? exited : null;
}

export interface CrashLoopWatcherDeps {
  driver: Pick<DockerDriver, 'servicesByLabel' | 'serviceTasks' | 'containerLogTail'>;
  report: (crashLoop: CrashLoop) => void;
  log: Logger;
  rule?: CrashLoopRule;
  /** Between two looks. Default 5 s. */
  intervalMs?: number;
  /** Lines of the failing task's log sent. Default 20. */
  logLines?: number;
  now?: () => Date;
}

export class CrashLoopWatcher {
  /** `<service>/<deployment>` already reported. */
  private readonly reported = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly deps: CrashLoopWatcherDeps) {}

  start(): void {
    this.stopped = false;
    const tick = () => {
      this.running = this.look()
        .then(() => undefined)
        .catch((err: unknown) => this.deps.log.warn({ err: (err as Error).message }, 'could not look for crash loops'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.deps.intervalMs ?? 5_000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One look at every application service; answers the crash loops it reported. */
  async look(): Promise<CrashLoop[]> {
    const rule = this.deps.rule ?? DEFAULT_CRASH_LOOP_RULE;
    const now = (this.deps.now ?? (() => new Date()))();
    const services = await this.deps.driver.servicesByLabel({ [MANAGED_LABEL]: 'true', 'skiff.kind': 'application' });
    const current = new Set<string>();
    const sent: CrashLoop[] = [];
    for (const service of services) {
      const key = `${service.name}/${service.labels[DEPLOYMENT_LABEL] ?? ''}`;
      current.add(key);
      if (this.reported.has(key)) continue;
      let exited: TaskInfo[] | null;
      try {
        exited = crashLoopOf(service, await this.deps.driver.serviceTasks(service.name), rule, now);
      } catch (err) {
        if (err instanceof DockerError) continue;
        throw err;
      }
      if (!exited) continue;
      const last = exited[0]!;
      const logLines = await this.deps.driver.containerLogTail(last.containerId!, this.deps.logLines ?? 20).catch((err: unknown) => {
        if (err instanceof DockerError) return [`(the task's log could not be read: ${err.message})`];
        throw err;
      });
      const crashLoop: CrashLoop = {
        workloadId: service.labels['skiff.id'] ?? '',
        deploymentId: service.labels[DEPLOYMENT_LABEL]!,
        exits: exited.length,
        windowSeconds: Math.round(rule.windowMs / 1000),
        reason: taskFailure(last),
        logLines,
        detectedAt: timestampFromDate(now),
      };
      this.reported.add(key);
      this.deps.log.warn({ service: service.name, deploymentId: crashLoop.deploymentId, exits: exited.length }, 'crash loop');
      this.deps.report(crashLoop);
      sent.push(crashLoop);
    }
    for (const key of this.reported) if (!current.has(key)) this.reported.delete(key);
    return sent;
  }
}
