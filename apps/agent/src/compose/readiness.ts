/**
 * Whether a stack runs, read from the engine (never from Compose's output, which differs
 * between v1 and v2), as readings for waitForTasks (workloads/workload-services.ts), which
 * polls them with the command's deadline and makes a `done` hold for a settle time.
 *
 * Compose projects (`readComposeRunning`): every expected service has a container, and each
 * of its containers runs (healthy, when it has a health check), or ended with exit code 0 and
 * no restart policy that restarts it (a one-shot job such as a migration). A container that
 * ended with another code and is not restarting fails the reading with its code; one that
 * keeps restarting makes the settle time start over and ends at the deadline, named.
 *
 * Swarm stacks (`readStackRunning`): every expected service exists, its update is not paused
 * or rolled back, as many of its tasks run as it wants (global: every task the engine wants
 * running), and no task that appeared since the deploy began failed.
 */
import type { ServiceInfo, TaskInfo } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import type { TaskReading } from '../workloads/service-lifecycle.js';
import { docker, type ComposeSettings, type Run } from './cli.js';

export interface ContainerState {
  id: string;
  name: string;
  /** `com.docker.compose.service`. */
  service: string;
  /** A `run` container (not part of the project's services). */
  oneOff: boolean;
  status: string;
  restarting: boolean;
  exitCode: number;
  restartCount: number;
  startedAt: string;
  /** `starting`, `healthy`, `unhealthy`, or null without a health check. */
  health: string | null;
  restartPolicy: string;
}

/**
 * What `docker inspect` prints of a container, one short JSON object per line (the whole
 * container's JSON is too long for one output line: health check logs, mounts, labels).
 */
const INSPECT_FORMAT = [
  '{"id":{{json .Id}},"name":{{json .Name}}',
  '"status":{{json .State.Status}},"restarting":{{json .State.Restarting}},"exitCode":{{json .State.ExitCode}}',
  '"startedAt":{{json .State.StartedAt}},"health":{{with index .State "Health"}}{{json .Status}}{{else}}null{{end}}',
  '"restartCount":{{json .RestartCount}},"restartPolicy":{{json .HostConfig.RestartPolicy.Name}}',
  '"service":{{json (index .Config.Labels "com.docker.compose.service")}},"oneOff":{{json (index .Config.Labels "com.docker.compose.oneoff")}}}',
].join(',');

/** The containers of a Compose project, from `docker inspect`. */
export async function projectContainers(settings: ComposeSettings, project: string, run: Pick<Run, 'signal' | 'deadline'>): Promise<ContainerState[]> {
  const listed = await docker(settings, ['ps', '-a', '-q', '--no-trunc', '--filter', `label=com.docker.compose.project=${project}`], run);
  if (listed.code !== 0) throw new DockerError('docker ps', listed.lines.join(' ').slice(0, 300));
  const ids = listed.lines.map((l) => l.trim()).filter((l) => /^[0-9a-f]{12,64}$/.test(l));
  if (ids.length === 0) return [];
  // A container removed meanwhile makes inspect exit 1 and print the others.
  const inspected = await docker(settings, ['inspect', '--type', 'container', '--format', INSPECT_FORMAT, ...ids], run);
  return inspected.lines.filter((l) => l.startsWith('{"id":')).map(containerStateOf);
}

export function containerStateOf(line: string): ContainerState {
  const raw = JSON.parse(line) as Omit<ContainerState, 'oneOff' | 'service'> & { service: string | null; oneOff: string | null };
  return { ...raw, name: raw.name.replace(/^\//, ''), service: raw.service ?? '', oneOff: (raw.oneOff ?? '').toLowerCase() === 'true' };
}

const RESTARTS_ALWAYS = new Set(['always', 'unless-stopped']);

export function readComposeRunning(expected: readonly string[], containers: readonly ContainerState[]): TaskReading {
  const parts: string[] = [];
  const settling: string[] = [];
  let waiting = false;
  for (const service of expected) {
    const own = containers.filter((c) => c.service === service && !c.oneOff);
    if (own.length === 0) {
      waiting = true;
      parts.push(`${service}: no container yet`);
      continue;
    }
    for (const c of own) {
      const label = own.length > 1 ? `${service} (${c.name})` : service;
      if (c.status === 'running' && !c.restarting) {
        if (c.health === 'starting' || c.health === 'unhealthy') {
          waiting = true;
          parts.push(`${label}: running, ${c.health}`);
        } else {
          parts.push(`${label}: running${c.health ? `, ${c.health}` : ''}`);
        }
        settling.push(`${c.id}/${c.restartCount}/${c.startedAt}`);
      } else if (c.restarting) {
        waiting = true;
        parts.push(`${label}: restarting (exit code ${c.exitCode}, ${c.restartCount} restarts)`);
      } else if ((c.status === 'exited' || c.status === 'dead') && c.exitCode === 0 && !RESTARTS_ALWAYS.has(c.restartPolicy)) {
        parts.push(`${label}: finished`);
      } else if (c.status === 'exited' || c.status === 'dead') {
        return { phase: 'failed', reason: `service ${label} ${c.status === 'dead' ? 'is dead' : `exited with code ${c.exitCode}`}` };
      } else {
        waiting = true;
        parts.push(`${label}: ${c.status}`);
      }
    }
  }
  const summary = parts.join('; ') || 'no service';
  return waiting ? { phase: 'waiting', summary } : { phase: 'done', summary, settling: settling.sort() };
}

/** Stopped: no container of the project runs (or restarts) any more. */
export function readComposeStopped(containers: readonly ContainerState[]): TaskReading {
  const live = containers.filter((c) => !c.oneOff && (c.status === 'running' || c.restarting || c.status === 'restarting'));
  if (live.length === 0) return { phase: 'done', summary: 'no container runs' };
  return { phase: 'waiting', summary: `${live.map((c) => c.name).join(', ')} still running` };
}

const LIVE_TASK = new Set(['new', 'allocated', 'pending', 'assigned', 'accepted', 'preparing', 'ready', 'starting', 'running']);
const FAILED_TASK = new Set(['failed', 'rejected']);
const UPDATE_FAILED = new Set(['paused', 'rollback_started', 'rollback_paused', 'rollback_completed']);

export interface StackServiceState {
  info: ServiceInfo;
  tasks: readonly TaskInfo[];
}

/**
 * `expected`: the stack's service names as the engine names them (`<stack>_<service>`);
 * `known`: ids of the tasks that existed before the deploy began.
 */
export function readStackRunning(expected: readonly string[], services: readonly StackServiceState[], known: ReadonlySet<string>): TaskReading {
  const parts: string[] = [];
  const settling: string[] = [];
  let waiting = false;
  for (const name of expected) {
    const service = services.find((s) => s.info.name === name);
    if (!service) {
      waiting = true;
      parts.push(`${name}: not created yet`);
      continue;
    }
    const { info, tasks } = service;
    if (info.updateState !== null && UPDATE_FAILED.has(info.updateState)) {
      const why = info.updateState === 'paused' ? 'its update paused' : 'the engine rolled its update back';
      return { phase: 'failed', reason: `service ${name}: ${why}${info.updateMessage ? ` (${info.updateMessage})` : ''}` };
    }
    const failed = tasks.find((t) => !known.has(t.id) && FAILED_TASK.has(t.state));
    if (failed) {
      const exit = failed.exitCode !== null && failed.exitCode !== 0 ? ` (exit code ${failed.exitCode})` : '';
      return { phase: 'failed', reason: `service ${name}: task ${failed.state}: ${failed.error ?? failed.message}${exit}` };
    }
    const running = tasks.filter((t) => t.state === 'running' && t.desiredState === 'running');
    const wanted = info.replicas ?? Math.max(1, tasks.filter((t) => t.desiredState === 'running').length);
    const live = tasks.filter((t) => LIVE_TASK.has(t.state) && t.desiredState !== 'running').length;
    parts.push(`${name}: ${running.length}/${wanted} running`);
    if (running.length < wanted || live > 0 || info.updateState === 'updating') waiting = true;
    settling.push(...running.map((t) => t.id));
  }
  const summary = parts.join('; ') || 'no service';
  return waiting ? { phase: 'waiting', summary } : { phase: 'done', summary, settling: settling.sort() };
}
