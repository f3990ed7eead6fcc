/**
 * StopWorkload: stops the workload's services and waits until none of their tasks runs.
 * A replicated service is scaled to 0 (its replica count kept in `skiff.replicas` for
 * StartWorkload); a global service gets a constraint no node matches (service-lifecycle.ts).
 *
 * Idempotent: a stopped service is left as it is, and a workload without a service is
 * stopped already, so the command succeeds.
 *
 * A compose stack run by Docker Compose goes through compose/lifecycle.ts; a Swarm stack is
 * handled here, its services found by label like any other.
 */
import { CommandKind, CommandStatus, WorkloadKind } from '@skiff/proto';
import { composeLifecycle } from '../compose/lifecycle.js';
import type { CommandHandler } from './handler.js';
import { DockerNotFoundError } from '../docker/errors.js';
import { LifecycleRefused, readStopped, stoppedSpec } from './service-lifecycle.js';
import { asOutcome, checkWorkload, failed, succeeded, waitForTasks, workloadOf, workloadServices, type WorkloadCommandDeps } from './workload-services.js';

export function stopWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
    payloadCase: 'stopWorkload',
    takesSlot: false,
    validate: checkWorkload,
    run: (context) =>
      asOutcome(context, async () => {
        const workload = workloadOf(context.command)!;
        if (workload.kind === WorkloadKind.WORKLOAD_KIND_COMPOSE) {
          const outcome = await composeLifecycle('stop', context, deps, workload);
          if (outcome) return outcome;
        }
        const services = await workloadServices(deps.driver, workload);
        if (services.length === 0) context.log.info({ appName: workload.appName }, 'no service to stop');
        for (const service of services) {
          let written;
          try {
            written = await deps.driver.updateService(service.name, (spec) => stoppedSpec(spec));
          } catch (err) {
            if (err instanceof LifecycleRefused) return failed(err.message);
            throw err;
          }
          if (!written) continue; // removed in the meantime: stopped
          context.log.info({ service: service.name, changed: written.changed }, 'service scaled down');
          const outcome = await waitForTasks(context, deps, `stopping service ${service.name}`, async () => {
            try {
              return readStopped(await deps.driver.serviceTasks(service.name));
            } catch (err) {
              if (err instanceof DockerNotFoundError) return { phase: 'done', summary: 'the service is gone' };
              throw err;
            }
          });
          if (outcome.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return outcome;
        }
        return succeeded();
      }),
  };
}
