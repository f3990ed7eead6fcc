/**
 * ReloadWorkload: restarts the workload's tasks with the same spec. TaskTemplate.ForceUpdate
 * goes up by one, so the engine replaces every task following the service's update config
 * (`start-first` by default: the new task runs before the old one stops), and the command
 * waits until the tasks of the new ForceUpdate run and the update is over. A failed new
 * task, a paused update or a rollback fails it with the engine's reason.
 *
 * Idempotent: the service carries `skiff.reload=<commandId>` once this command's bump is
 * written, so running the command again (after an agent restart) only waits. A stopped
 * service stays stopped; a workload without a service fails (deploy it first).
 *
 * A compose stack run by Docker Compose goes through compose/lifecycle.ts; a Swarm stack is
 * handled here, its services found by label like any other (workload-handler.ts).
 */
import { CommandKind } from '@skiff/proto';
import type { CommandHandler } from '../pipeline/handler.js';
import { readReloaded, reloadedSpec } from '../workloads/service-lifecycle.js';
import { workloadServices } from '../workloads/workload-services.js';
import { serviceLifecycleHandler, type WorkloadCommandDeps } from './workload-handler.js';

export function reloadWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return serviceLifecycleHandler(deps, {
    kind: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD,
    payloadCase: 'reloadWorkload',
    operation: 'reload',
    doing: 'reloading',
    done: 'reloaded',
    writtenMessage: 'service reloading',
    goneIsDone: false,
    change: (spec, command) => reloadedSpec(spec, command.commandId),
    logFields: (target) => ({ forceUpdate: target.TaskTemplate.ForceUpdate ?? 0 }),
    tasksReader: async (service, workload) => async (target) => {
      const now = (await workloadServices(deps.driver, workload)).find((s) => s.name === service.name);
      if (!now) return { phase: 'failed', reason: 'the service disappeared' };
      return readReloaded(target, now.updateState, now.updateMessage, await deps.driver.serviceTasks(service.name));
    },
  });
}
