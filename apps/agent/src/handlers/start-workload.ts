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
 * handled here, its services found by label like any other (workload-handler.ts).
 */
import { CommandKind } from '@skiff/proto';
import type { CommandHandler } from '../pipeline/handler.js';
import { readRunning, startedSpec } from '../workloads/service-lifecycle.js';
import { serviceLifecycleHandler, type WorkloadCommandDeps } from './workload-handler.js';

export function startWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return serviceLifecycleHandler(deps, {
    kind: CommandKind.COMMAND_KIND_START_WORKLOAD,
    payloadCase: 'startWorkload',
    operation: 'start',
    doing: 'starting',
    done: 'started',
    writtenMessage: 'service scaled up',
    goneIsDone: false,
    change: (spec) => startedSpec(spec),
    async tasksReader(service) {
      // A task that was there before the start and failed is not the reason it did not start.
      const known = new Set((await deps.driver.serviceTasks(service.name)).map((t) => t.id));
      return async (target) => readRunning(target, await deps.driver.serviceTasks(service.name), known);
    },
  });
}
