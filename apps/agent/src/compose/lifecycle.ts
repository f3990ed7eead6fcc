/**
 * Stop, start, reload and remove of a compose stack (workload kind COMPOSE). How the stack
 * runs comes from its `stack.json` (stack-state.ts), written by its last deploy; without one
 * (never deployed here, or its directory lost), from the engine: Swarm services labelled with
 * the stack's id make a Swarm stack, containers of its Compose project a Compose project.
 *
 * Swarm stacks are stopped, started and reloaded like every Skiff service, by label (the
 * caller's Swarm path: `composeLifecycle` answers null). Compose projects:
 * - stop: `<compose> stop`, until no container of the project runs;
 * - start: `<compose> start`, until the services that have containers run (as after a deploy);
 * - reload: `<compose> restart`, then the same wait; a stopped project stays stopped.
 * Remove (both kinds): `<compose> down [--volumes] --remove-orphans` (or, without its files or
 * a Compose program, the project's containers, networks and, when asked, volumes removed by
 * their Compose labels), or `docker stack rm` and then, when asked, the stack's volumes once
 * its containers are gone; the stack's own network (isolated stacks); then its directory,
 * keeping `files/` (its bind-mounted data) unless the volumes go too. Removing what is gone
 * succeeds.
 */
import { join } from 'node:path';
import { CommandStatus, type WorkloadRef } from '@skiff/proto';
import { failed, succeeded, type CommandContext, type CommandOutcome } from '../pipeline/handler.js';
import type { TaskReading } from '../workloads/service-lifecycle.js';
import { waitForTasks, type WorkloadDeps } from '../workloads/workload-services.js';
import { BuildError } from '../build/errors.js';
import { DockerError } from '../docker/errors.js';
import { ComposeRunError, docker, runCompose, type ComposeSettings, type Files, type Run } from './cli.js';
import { projectContainers, readComposeRunning, readComposeStopped } from './readiness.js';
import { refuseProjectName } from '@skiff/domain';
import { exists, removeStackDir, stackDirOf, type StackDir } from './stack-dir.js';
import { stackServiceStates } from './stack-services.js';
import { readStackState, type StackState } from './stack-state.js';

export type ComposeOperation = 'stop' | 'start' | 'reload' | 'remove';

export interface ComposeLifecycleDeps extends WorkloadDeps {
  /** How compose stacks run on this server; absent: their commands fail saying so. */
  compose?: ComposeSettings;
}

export interface Stack {
  dir: StackDir;
  state: StackState | null;
  type: 'container-compose' | 'stack' | null;
}

/** The outcome, or null when the stack is a Swarm stack and the caller's Swarm path applies (stop, start, reload). */
export async function composeLifecycle(
  op: ComposeOperation,
  context: CommandContext,
  deps: ComposeLifecycleDeps,
  workload: WorkloadRef,
  options: { removeVolumes?: boolean } = {},
): Promise<CommandOutcome | null> {
  const settings = deps.compose;
  if (!settings) return failed('this agent is not set up to run compose stacks');
  const refusal = refuseProjectName(workload.appName);
  if (refusal) return failed(refusal);
  const now = deps.now ?? (() => new Date());
  const deadline = Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + (deps.waitTimeoutMs ?? 5 * 60_000));
  const run: Run = {
    signal: context.signal,
    deadline,
    log: async (...lines) => void context.log.info({ lines }, `compose ${op}`),
  };
  try {
    return await operate(op, context, deps, settings, workload, run, options.removeVolumes ?? false);
  } catch (err) {
    // The program's own reason (its last lines), not an agent failure.
    if (err instanceof BuildError) return failed(err.message);
    throw err;
  }
}

async function operate(
  op: ComposeOperation,
  context: CommandContext,
  deps: WorkloadDeps,
  settings: ComposeSettings,
  workload: WorkloadRef,
  run: Run,
  removeVolumes: boolean,
): Promise<CommandOutcome | null> {
  const now = deps.now ?? (() => new Date());
  const deadline = run.deadline;
  const stack = await stackOf(settings, workload, run);
  if (op === 'remove') return remove(context, deps, settings, workload, stack, run, removeVolumes);
  if (stack.type === 'stack') return null;
  if (stack.type === null) {
    return op === 'stop' ? succeeded() : failed(`compose stack ${workload.appName} is not deployed on this server: deploy it first`);
  }
  const files = stack.state ? await filesOf(stack.dir, stack.state) : null;
  if (!files) return failed(`the files of compose stack ${workload.appName} are missing on this server: deploy it again`);
  const wait = (what: string, look: () => Promise<TaskReading>) =>
    waitForTasks(context, { ...deps, waitTimeoutMs: Math.max(0, deadline - now().getTime()) }, what, look);
  const containers = () => projectContainers(settings, workload.appName, run);

  if (op === 'stop') {
    await runCompose(settings, files, ['stop'], run);
    return wait(`stopping stack ${workload.appName}`, async () => readComposeStopped(await containers()));
  }
  const before = await containers();
  const services = [...new Set(before.filter((c) => !c.oneOff).map((c) => c.service))];
  if (services.length === 0) return failed(`compose stack ${workload.appName} has no containers on this server: deploy it again`);
  if (op === 'reload' && readComposeStopped(before).phase === 'done') {
    context.log.info({ appName: workload.appName }, 'the stack is stopped: nothing to restart');
    return succeeded();
  }
  await runCompose(settings, files, [op === 'start' ? 'start' : 'restart'], run);
  return wait(`${op === 'start' ? 'starting' : 'reloading'} stack ${workload.appName}`, async () => readComposeRunning(services, await containers()));
}

async function stackOf(settings: ComposeSettings, workload: WorkloadRef, run: Run): Promise<Stack> {
  const dir = stackDirOf(settings.dataDir, workload.appName);
  const state = await readStackState(dir);
  if (state) return { dir, state, type: state.type };
  return { dir, state, type: await typeFromEngine(settings, workload, run) };
}

/** Without a state file: what the engine runs for the stack, or null. */
async function typeFromEngine(settings: ComposeSettings, workload: WorkloadRef, run: Run): Promise<Stack['type']> {
  const listed = await docker(settings, ['service', 'ls', '-q', '--filter', `label=skiff.id=${workload.id}`, '--filter', 'label=skiff.kind=compose'], run);
  if (listed.code === 0 && listed.lines.some((l) => l.trim() !== '')) return 'stack';
  return (await projectContainers(settings, workload.appName, run)).length > 0 ? 'container-compose' : null;
}

async function filesOf(dir: StackDir, state: StackState): Promise<Files | null> {
  const file = join(dir.root, state.file);
  const envFile = join(dir.root, state.envFile);
  if (!(await exists(file)) || !(await exists(envFile))) return null;
  return { project: state.project, file, envFile, cwd: join(file, '..') };
}

async function remove(
  context: CommandContext,
  deps: WorkloadDeps,
  settings: ComposeSettings,
  workload: WorkloadRef,
  stack: Stack,
  run: Run,
  removeVolumes: boolean,
): Promise<CommandOutcome> {
  const project = workload.appName;
  let outcome = await takeDown(context, deps, settings, workload, stack, run, removeVolumes);
  if (outcome.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return outcome;
  outcome = await waitWithin(context, deps, run, `removing network ${project}`, () => removeOwnNetwork(settings, project, run));
  if (outcome.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return outcome;
  await removeStackDir(stack.dir, { keepFiles: !removeVolumes });
  context.log.info({ project, keptFiles: !removeVolumes }, 'compose stack removed');
  return succeeded();
}

/**
 * Removes what runs of the stack (its containers or Swarm services, the networks Compose or
 * the stack made, the volumes when asked), waiting until it is gone; its directory stays.
 * Also what a deploy runs first when the stack's compose type changed.
 */
export async function takeDown(
  context: CommandContext,
  deps: WorkloadDeps,
  settings: ComposeSettings,
  workload: WorkloadRef,
  stack: Stack,
  run: Run,
  removeVolumes: boolean,
): Promise<CommandOutcome> {
  const project = workload.appName;
  if (stack.type === 'stack') {
    const removed = await docker(settings, ['stack', 'rm', project], run);
    context.log.info({ project, lines: removed.lines }, 'docker stack rm');
    return waitWithin(context, deps, run, `removing stack ${project}`, async () => {
      const services = await stackServiceStates(deps.driver, workload.id);
      const containers = await labelled(settings, 'ps', `com.docker.stack.namespace=${project}`, run);
      if (services.length > 0 || containers.length > 0) {
        return { phase: 'waiting', summary: `${services.length} service(s) and ${containers.length} container(s) still there` };
      }
      return removeVolumes ? removeVolumesOf(settings, project, run) : { phase: 'done', summary: 'removed' };
    });
  }
  const files = stack.state ? await filesOf(stack.dir, stack.state) : null;
  if (stack.type === 'container-compose' && files && settings.program.program) {
    try {
      await runCompose(settings, files, ['down', '--remove-orphans', ...(removeVolumes ? ['--volumes'] : [])], run);
    } catch (err) {
      // `down` gives up on a network whose endpoints are still detaching (after a cancelled `up`,
      // for one): what it left is removed by its labels below.
      if (!(err instanceof ComposeRunError)) throw err;
      context.log.warn({ project, error: err.message }, 'compose down failed: removing what it left by its labels');
    }
  }
  // What `down` left, or what is there without the stack's files (an earlier remove kept the volumes).
  return waitWithin(context, deps, run, `removing stack ${project}`, async () => {
    const reading = await removeProjectByLabel(settings, project, run);
    return reading.phase === 'done' && removeVolumes ? removeVolumesOf(settings, project, run) : reading;
  });
}

function waitWithin(context: CommandContext, deps: WorkloadDeps, run: Run, what: string, look: () => Promise<TaskReading>): Promise<CommandOutcome> {
  const now = deps.now ?? (() => new Date());
  return waitForTasks(context, { ...deps, settleMs: 0, waitTimeoutMs: Math.max(0, run.deadline - now().getTime()) }, what, look);
}

/** What `down` removes, by the project's labels: its containers and networks. */
async function removeProjectByLabel(settings: ComposeSettings, project: string, run: Run): Promise<TaskReading> {
  const label = `com.docker.compose.project=${project}`;
  const containers = await labelled(settings, 'ps', label, run);
  if (containers.length > 0) await docker(settings, ['rm', '-f', ...containers], run);
  return removeLabelled(settings, 'network', label, run);
}

/**
 * The stack's volumes: those Compose made for the project and those Swarm made for the stack
 * (a stack whose compose type changed has both kinds of labels on the volumes it kept).
 */
async function removeVolumesOf(settings: ComposeSettings, project: string, run: Run): Promise<TaskReading> {
  const compose = await removeLabelled(settings, 'volume', `com.docker.compose.project=${project}`, run);
  const swarm = await removeLabelled(settings, 'volume', `com.docker.stack.namespace=${project}`, run);
  return compose.phase !== 'done' ? compose : swarm;
}

/** Ids (containers: all, running or not) of the objects of one kind carrying `label`. */
async function labelled(settings: ComposeSettings, kind: 'ps' | 'network' | 'volume', label: string, run: Run): Promise<string[]> {
  const args = kind === 'ps' ? ['ps', '-a', '-q', '--no-trunc'] : [kind, 'ls', '-q'];
  const listed = await docker(settings, [...args, '--filter', `label=${label}`], run);
  if (listed.code !== 0) throw new DockerError(`docker ${args.slice(0, 2).join(' ')}`, listed.lines.join(' ').slice(0, 300));
  return listed.lines.map((l) => l.trim()).filter((l) => l !== '');
}

async function removeLabelled(settings: ComposeSettings, kind: 'network' | 'volume', label: string, run: Run): Promise<TaskReading> {
  const names = await labelled(settings, kind, label, run);
  if (names.length === 0) return { phase: 'done', summary: `no ${kind} left` };
  await docker(settings, [kind, 'rm', ...names], run);
  const left = await labelled(settings, kind, label, run);
  return left.length === 0 ? { phase: 'done', summary: `no ${kind} left` } : { phase: 'waiting', summary: `${kind} ${left.join(', ')} still in use` };
}

/** The stack's own network (isolated stacks: named after it, made by the agent, labelled skiff.managed). */
async function removeOwnNetwork(settings: ComposeSettings, name: string, run: Run): Promise<TaskReading> {
  const inspected = await docker(settings, ['network', 'inspect', '--format', '{{json .Labels}}', name], run);
  if (inspected.code !== 0) return { phase: 'done', summary: 'no network of its own' };
  let labels: Record<string, string> | null = null;
  try {
    labels = JSON.parse(inspected.lines.find((l) => l.startsWith('{')) ?? 'null') as Record<string, string> | null;
  } catch {
    // Not a network whose labels can be read: not Skiff's.
  }
  if (labels?.['skiff.managed'] !== 'true') return { phase: 'done', summary: `network ${name} is not Skiff's: left alone` };
  const removed = await docker(settings, ['network', 'rm', name], run);
  return removed.code === 0 ? { phase: 'done', summary: `network ${name} removed` } : { phase: 'waiting', summary: `network ${name} still in use` };
}
