/**
 * StopWorkload: stops the workload's services and waits until none of their tasks runs.
 * A replicated service is scaled to 0 (its replica count kept in `skiff.replicas` for
 * StartWorkload); a global service gets a constraint no node matches (workloads/service-lifecycle.ts).
 *
 * Idempotent: a stopped service is left as it is, and a workload without a service is
 * stopped already, so the command succeeds.
 *
 * A compose stack run by Docker Compose goes through compose/lifecycle.ts; a Swarm stack is
 * handled here, its services found by label like any other (workload-handler.ts).
 */
import { CommandKind } from '@skiff/proto';
import { DockerNotFoundError } from '../docker/errors.js';
import type { CommandHandler } from '../pipeline/handler.js';
import { readStopped, stoppedSpec } from '../workloads/service-lifecycle.js';
import { serviceLifecycleHandler, type WorkloadCommandDeps } from './workload-handler.js';

export function stopWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return serviceLifecycleHandler(deps, {
    kind: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
    payloadCase: 'stopWorkload',
    operation: 'stop',
    doing: 'stopping',
    done: 'stopped',
    writtenMessage: 'service scaled down',
    goneIsDone: true,
    change: (spec) => stoppedSpec(spec),
    tasksReader: async (service) => async () => {
      try {
        return readStopped(await deps.driver.serviceTasks(service.name));
      } catch (err) {
        if (err instanceof DockerNotFoundError) return { phase: 'done', summary: 'the service is gone' };
        throw err;
      }
    },
  });
}
