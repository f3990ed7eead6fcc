/**
 * The handler the workload commands (stop, start, reload, remove, and any later command whose
 * payload names a `workload`) share: the workload the
 * command names, checked before it runs; a compose stack run by Docker Compose goes through
 * compose/lifecycle.ts; otherwise (a Swarm stack too) the workload's Swarm services, found by
 * label (workloads/workload-services.ts), are acted on. A Docker failure ends the command
 * FAILED with the engine's message.
 *
 * Stop, start and reload differ only in how they change each service's spec and how they
 * read its tasks afterwards (workloads/service-lifecycle.ts): `serviceLifecycleHandler`.
 */
import { CommandStatus, WorkloadKind, workloadKindToJSON, type Command, type CommandKind, type WorkloadRef } from '@skiff/proto';
import { AbandonedError } from '../abort/abandoned.js';
import { composeLifecycle, type ComposeLifecycleDeps, type ComposeOperation } from '../compose/lifecycle.js';
import type { ServiceInfo, ServiceSpec } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { failed, succeeded, type CommandContext, type CommandHandler, type CommandOutcome } from '../pipeline/handler.js';
import { LifecycleRefused, type TaskReading } from '../workloads/service-lifecycle.js';
import { changeService, serviceKindOf, waitForTasks, workloadServices } from '../workloads/workload-services.js';

/**
 * What the workload handlers act through: the engine, how they wait for its tasks, and how
 * compose stacks run on this server (kind COMPOSE; absent: their commands fail saying so).
 */
export type WorkloadCommandDeps = ComposeLifecycleDeps;

type PayloadCase = NonNullable<Command['payload']>['$case'];

/** The workload a command names: every payload that acts on one carries it as `workload`. */
export function workloadOf(command: Command): WorkloadRef | null {
  const value = command.payload?.value;
  return value && 'workload' in value ? (value.workload ?? null) : null;
}

/** Why the command's workload cannot be acted on, or null. */
export function checkWorkload(command: Command): string | null {
  const workload = workloadOf(command);
  if (!workload || workload.id === '' || workload.appName === '') return 'workload (with app_name and id) is missing';
  if (!serviceKindOf(workload.kind)) return `workloads of kind ${workloadKindToJSON(workload.kind)} are not handled by this command yet`;
  return null;
}

/** Runs a handler's steps; a Docker failure becomes FAILED with the engine's message. */
export async function asOutcome(context: CommandContext, steps: () => Promise<CommandOutcome>): Promise<CommandOutcome> {
  try {
    return await steps();
  } catch (err) {
    if (err instanceof AbandonedError || context.signal.aborted) throw err;
    if (err instanceof DockerError) return failed(err.message);
    throw err;
  }
}

export interface WorkloadCommand {
  kind: CommandKind;
  payloadCase: PayloadCase;
  /** What compose/lifecycle.ts does to a compose stack. */
  composeOperation: ComposeOperation;
  /** Why the command cannot be run, checked before its workload; null when nothing is wrong. */
  refuse?(command: Command): string | null;
  /** What compose/lifecycle.ts is asked besides the operation. */
  composeOptions?(command: Command): { removeVolumes?: boolean };
  /** What is done to the workload's Swarm services (when the workload is no Compose project). */
  actOnServices(context: CommandContext, workload: WorkloadRef): Promise<CommandOutcome>;
}

export function workloadHandler(deps: WorkloadCommandDeps, command: WorkloadCommand): CommandHandler {
  return {
    kind: command.kind,
    payloadCase: command.payloadCase,
    takesSlot: false,
    validate: (received) => command.refuse?.(received) ?? checkWorkload(received),
    run: (context) =>
      asOutcome(context, async () => {
        const workload = workloadOf(context.command)!;
        if (workload.kind === WorkloadKind.WORKLOAD_KIND_COMPOSE) {
          const outcome = await composeLifecycle(command.composeOperation, context, deps, workload, command.composeOptions?.(context.command));
          if (outcome) return outcome;
        }
        return command.actOnServices(context, workload);
      }),
  };
}

/** What sets stop, start and reload apart. */
export interface ServiceLifecycleCommand {
  kind: CommandKind;
  payloadCase: 'stopWorkload' | 'startWorkload' | 'reloadWorkload';
  operation: 'stop' | 'start' | 'reload';
  /** How the log and the reasons name the operation: `starting`, `started`. */
  doing: string;
  done: string;
  /** The log line once a service's spec is written. */
  writtenMessage: string;
  /**
   * Whether a workload without services, or a service gone while it was changed, is as the
   * command wants it (stop); otherwise the command fails (deploy the application first).
   */
  goneIsDone: boolean;
  /** The service's spec after the operation, or null when it is so already. Throws LifecycleRefused. */
  change(spec: ServiceSpec, command: Command): ServiceSpec | null;
  /**
   * Called before the service's spec is changed (start notes the tasks there before): how to
   * read the service's tasks afterwards, given the spec written.
   */
  tasksReader(service: ServiceInfo, workload: WorkloadRef): Promise<(target: ServiceSpec) => Promise<TaskReading>>;
  /** More fields of the log line once the spec is written. */
  logFields?(target: ServiceSpec): Record<string, unknown>;
}

/** Changes each of the workload's services (`change`) and waits until its tasks read done. */
export function serviceLifecycleHandler(deps: WorkloadCommandDeps, command: ServiceLifecycleCommand): CommandHandler {
  return workloadHandler(deps, {
    kind: command.kind,
    payloadCase: command.payloadCase,
    composeOperation: command.operation,
    async actOnServices(context, workload) {
      const services = await workloadServices(deps.driver, workload);
      if (services.length === 0) {
        if (!command.goneIsDone) return failed(`service ${workload.appName} does not exist on this server: deploy the application first`);
        context.log.info({ appName: workload.appName }, `no service to ${command.operation}`);
      }
      for (const service of services) {
        const readTasks = await command.tasksReader(service, workload);
        let written;
        try {
          written = await changeService(deps.driver, service.name, (current) => command.change(current, context.command));
        } catch (err) {
          if (err instanceof LifecycleRefused) return failed(err.message);
          throw err;
        }
        if (!written) {
          if (command.goneIsDone) continue; // removed in the meantime: as wanted
          return failed(`service ${service.name} disappeared while it was being ${command.done}`);
        }
        const target = written.spec;
        context.log.info({ service: service.name, changed: written.changed, ...command.logFields?.(target) }, command.writtenMessage);
        const outcome = await waitForTasks(context, deps, `${command.doing} service ${service.name}`, () => readTasks(target));
        if (outcome.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return outcome;
      }
      return succeeded();
    },
  });
}
