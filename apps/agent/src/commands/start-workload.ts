/**
 * StartWorkload: starts the workload's stopped services again with their last deployed
 * spec (the replica count StopWorkload kept, or 1; a global service without the stop
 * constraint) and waits until their tasks run. A task that fails on the way is the reason
 * the command fails (a missing image, a crashing command).
 *
 * Idempotent: a running service is only waited for. A workload without a service cannot
 * be started: it needs a deploy, and the command fails saying so.
 *
 * A compose stack run by Docker Compose goes through compose/lifecycle.ts; a Swarm stack is
 * handled here, its services found by label like any other.
 */
import { CommandKind, CommandStatus, WorkloadKind } from '@skiff/proto';
import { composeLifecycle } from '../compose/lifecycle.js';
import type { CommandHandler } from './handler.js';
import { LifecycleRefused, readRunning, startedSpec } from './service-lifecycle.js';
import { asOutcome, changeService, checkWorkload, failed, succeeded, waitForTasks, workloadOf, workloadServices, type WorkloadCommandDeps } from './workload-services.js';

export function startWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_START_WORKLOAD,
    payloadCase: 'startWorkload',
    takesSlot: false,
    validate: checkWorkload,
    run: (context) =>
      asOutcome(context, async () => {
        const workload = workloadOf(context.command)!;
        if (workload.kind === WorkloadKind.WORKLOAD_KIND_COMPOSE) {
          const outcome = await composeLifecycle('start', context, deps, workload);
          if (outcome) return outcome;
        }
        const services = await workloadServices(deps.driver, workload);
        if (services.length === 0) {
          return failed(`service ${workload.appName} does not exist on this server: deploy the application first`);
        }
        for (const service of services) {
          const known = new Set((await deps.driver.serviceTasks(service.name)).map((t) => t.id));
          let written;
          try {
            written = await changeService(deps.driver, service.name, (current) => startedSpec(current));
          } catch (err) {
            if (err instanceof LifecycleRefused) return failed(err.message);
            throw err;
          }
          if (!written) return failed(`service ${service.name} disappeared while it was being started`);
          const target = written.spec;
          context.log.info({ service: service.name, changed: written.changed }, 'service scaled up');
          const outcome = await waitForTasks(context, deps, `starting service ${service.name}`, async () =>
            readRunning(target, await deps.driver.serviceTasks(service.name), known),
          );
          if (outcome.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return outcome;
        }
        return succeeded();
      }),
  };
}
