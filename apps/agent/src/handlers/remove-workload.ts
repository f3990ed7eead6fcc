/**
 * RemoveWorkload: removes the workload's services (found by their `skiff.*` labels, so
 * only Skiff's own and only this workload's). The engine stops their tasks on its own.
 * A cache instance's (and an application's) removal also waits until the removed service's
 * containers are gone, so a deploy that follows (a rebuild) never opens its data while the
 * old server still writes it, and an application's built images can go too
 * (deployments/built-images.ts), and so do the files of its file mounts (deployments/file-mounts.ts).
 * With `remove_volumes`, the workload's volumes (by the same labels: a cache's data, an
 * application's mounted volumes) go too.
 *
 * Idempotent: a workload without a service (or volume) is removed already, and the command
 * succeeds. A compose stack (its project or Swarm stack, its volumes when asked, its
 * directory): compose/lifecycle.ts.
 */
import { CommandKind, CommandStatus, WorkloadKind, type Command } from '@skiff/proto';
import { builtImageLabels, pruneBuiltImages } from '../deployments/built-images.js';
import { applicationDir, removeFilesDir } from '../deployments/file-mounts.js';
import { MANAGED_LABEL } from '../docker/driver.js';
import { DockerConflictError } from '../docker/errors.js';
import { failed, succeeded, type CommandContext, type CommandHandler, type CommandOutcome } from '../pipeline/handler.js';
import type { TaskReading } from '../workloads/service-lifecycle.js';
import { waitForTasks, workloadServices } from '../workloads/workload-services.js';
import { workloadHandler, type WorkloadCommandDeps } from './workload-handler.js';

/** How long an application's removal waits for its containers to go before it leaves its built images. */
const APPLICATION_CONTAINERS_WAIT_MS = 30_000;

export function removeWorkloadHandler(deps: WorkloadCommandDeps): CommandHandler {
  return workloadHandler(deps, {
    kind: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD,
    payloadCase: 'removeWorkload',
    composeOperation: 'remove',
    refuse(command) {
      const kind = command.payload?.$case === 'removeWorkload' ? command.payload.value.workload?.kind : undefined;
      if (removesVolumes(command) && kind !== WorkloadKind.WORKLOAD_KIND_CACHE && kind !== WorkloadKind.WORKLOAD_KIND_COMPOSE && kind !== WorkloadKind.WORKLOAD_KIND_APPLICATION) {
        return 'remove_volumes is supported for applications, cache instances and compose stacks only';
      }
      return null;
    },
    composeOptions: (command) => ({ removeVolumes: removesVolumes(command) }),
    async actOnServices(context, workload) {
      const services = await workloadServices(deps.driver, workload);
      if (services.length === 0) context.log.info({ appName: workload.appName }, 'no service to remove');
      for (const service of services) {
        const removed = await deps.driver.removeService(service.name);
        context.log.info({ service: service.name, removed }, 'service removed');
      }
      const left = await workloadServices(deps.driver, workload);
      if (left.length > 0) return failed(`service ${left.map((s) => s.name).join(', ')} is still there after its removal`);
      if (workload.kind !== WorkloadKind.WORKLOAD_KIND_CACHE && workload.kind !== WorkloadKind.WORKLOAD_KIND_APPLICATION) return succeeded();
      const kind = workload.kind === WorkloadKind.WORKLOAD_KIND_CACHE ? 'cache' : 'application';
      const labels = { [MANAGED_LABEL]: 'true', 'skiff.kind': kind, 'skiff.id': workload.id };
      const lookAtContainers = async (): Promise<TaskReading> => {
        const left = await deps.driver.containersByLabel(labels);
        return left.length === 0
          ? { phase: 'done', summary: 'no container left' }
          : { phase: 'waiting', summary: `${left.length} container(s) still ${[...new Set(left.map((c) => c.state))].join('/')}` };
      };
      if (kind === 'application') {
        const dataDir = deps.compose?.dataDir;
        if (dataDir) await removeFilesDir(applicationDir(dataDir, workload.id));
        if (removesVolumes(context.command)) {
          // The volumes can go only once no container holds them.
          const stopped = await waitForTasks(context, deps, 'stopping the removed containers', lookAtContainers);
          if (stopped.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return stopped;
          const removed = await removeVolumes(context, deps, labels);
          if (removed.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return removed;
        }
        // Its built images go once no container uses them; a removal does not fail for them.
        if ((await deps.driver.imagesByLabel(builtImageLabels(workload.id))).length === 0) return succeeded();
        const gone = await waitForTasks(context, { ...deps, waitTimeoutMs: APPLICATION_CONTAINERS_WAIT_MS }, 'stopping the removed containers', lookAtContainers);
        if (gone.status === CommandStatus.COMMAND_STATUS_SUCCEEDED) await pruneBuiltImages(deps.driver, workload.id, [], context.log);
        else context.log.info({ reason: gone.reason }, 'built images left: containers still stopping');
        return succeeded();
      }
      const stopped = await waitForTasks(context, deps, 'stopping the removed containers', lookAtContainers);
      if (stopped.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return stopped;
      if (removesVolumes(context.command)) return removeVolumes(context, deps, labels);
      return succeeded();
    },
  });
}

function removesVolumes(command: Command): boolean {
  const payload = command.payload;
  return payload?.$case === 'removeWorkload' && payload.value.removeVolumes;
}

/** Removes the workload's labelled volumes, waiting while a container still holds one. */
async function removeVolumes(context: CommandContext, deps: WorkloadCommandDeps, labels: Record<string, string>): Promise<CommandOutcome> {
  const outcome = await waitForTasks(context, deps, 'removing the volumes', async () => {
    const busy: string[] = [];
    for (const name of await deps.driver.volumesByLabel(labels)) {
      try {
        if (await deps.driver.removeVolume(name)) context.log.info({ volume: name }, 'volume removed');
      } catch (err) {
        if (!(err instanceof DockerConflictError)) throw err;
        busy.push(name);
      }
    }
    return busy.length === 0
      ? { phase: 'done', summary: 'no volume left' }
      : { phase: 'waiting', summary: `volume ${busy.join(', ')} still in use` };
  });
  return outcome.status === CommandStatus.COMMAND_STATUS_SUCCEEDED ? succeeded() : outcome;
}
