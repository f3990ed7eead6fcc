/**
 * RemoveWorkload: removes the workload's services (found by their `skiff.*` labels, so
 * only Skiff's own and only this workload's). The engine stops their tasks on its own.
 *
 * Idempotent: a workload without a service is removed already, and the command succeeds.
 * `remove_volumes` is refused for now: the services of applications and caches own no
 * volumes that Skiff created.
 */
import { CommandKind } from '@skiff/proto';
import type { CommandHandler } from './handler.js';
import { asOutcome, checkWorkload, failed, succeeded, workloadOf, workloadServices, type WorkloadCommandDeps } from './workload-services.js';

export function removeWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD,
    payloadCase: 'removeWorkload',
    takesSlot: false,
    validate(command) {
      if (command.payload?.$case === 'removeWorkload' && command.payload.value.removeVolumes) {
        return 'remove_volumes is not supported yet';
      }
      return checkWorkload(command);
    },
    run: (context) =>
      asOutcome(context, async () => {
        const workload = workloadOf(context.command)!;
        const services = await workloadServices(deps.driver, workload);
        if (services.length === 0) context.log.info({ appName: workload.appName }, 'no service to remove');
        for (const service of services) {
          const removed = await deps.driver.removeService(service.name);
          context.log.info({ service: service.name, removed }, 'service removed');
        }
        const left = await workloadServices(deps.driver, workload);
        if (left.length > 0) return failed(`service ${left.map((s) => s.name).join(', ')} is still there after its removal`);
        return succeeded();
      }),
  };
}
