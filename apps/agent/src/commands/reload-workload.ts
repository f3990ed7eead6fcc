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
 * handled here, its services found by label like any other.
 */
import { CommandKind, CommandStatus, WorkloadKind } from '@skiff/proto';
import { composeLifecycle } from '../compose/lifecycle.js';
import type { CommandHandler } from './handler.js';
import { LifecycleRefused, readReloaded, reloadedSpec } from './service-lifecycle.js';
import { asOutcome, changeService, checkWorkload, failed, succeeded, waitForTasks, workloadOf, workloadServices, type WorkloadCommandDeps } from './workload-services.js';

export function reloadWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD,
    payloadCase: 'reloadWorkload',
    takesSlot: false,
    validate: checkWorkload,
    run: (context) =>
      asOutcome(context, async () => {
        const workload = workloadOf(context.command)!;
        if (workload.kind === WorkloadKind.WORKLOAD_KIND_COMPOSE) {
          const outcome = await composeLifecycle('reload', context, deps, workload);
          if (outcome) return outcome;
        }
        const services = await workloadServices(deps.driver, workload);
        if (services.length === 0) {
          return failed(`service ${workload.appName} does not exist on this server: deploy the application first`);
        }
        for (const service of services) {
          let written;
          try {
            written = await changeService(deps.driver, service.name, (current) => reloadedSpec(current, context.command.commandId));
          } catch (err) {
            if (err instanceof LifecycleRefused) return failed(err.message);
            throw err;
          }
          if (!written) return failed(`service ${service.name} disappeared while it was being reloaded`);
          const target = written.spec;
          context.log.info({ service: service.name, changed: written.changed, forceUpdate: target.TaskTemplate.ForceUpdate ?? 0 }, 'service reloading');
          const outcome = await waitForTasks(context, deps, `reloading service ${service.name}`, async () => {
            const now = (await workloadServices(deps.driver, workload)).find((s) => s.name === service.name);
            if (!now) return { phase: 'failed', reason: 'the service disappeared' };
            return readReloaded(target, now.updateState, now.updateMessage, await deps.driver.serviceTasks(service.name));
          });
          if (outcome.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return outcome;
        }
        return succeeded();
      }),
  };
}
