import type { Logger } from 'pino';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { ProxyConfig } from '../domains/proxy-config.js';
import type { WorkloadRemovals } from './service-records.js';

/**
 * The WorkloadRemovals of the composition root, bound later (`bind`) to what is built after
 * the services that take it: the workload lifecycles (they queue the removals) and the
 * archive sweep (it deletes the files of archives whose rows went).
 */
export function lateWorkloadRemovals(proxy: ProxyConfig, outbox: CommandOutbox, log: Logger) {
  let lifecycles: Pick<WorkloadRemovals, 'queueRemovals'>[] = [];
  let sweepArchives: () => Promise<number> = async () => 0;
  // The records are gone already: a file left by a failure goes with the next sweep.
  const removeArchiveFiles = () =>
    sweepArchives().then(
      () => undefined,
      (err: unknown) => log.error({ err }, 'could not remove the archive files of removed applications'),
    );
  const workloads: WorkloadRemovals = {
    queueRemovals: async (tx, environmentIds, removal) => {
      const queued = [];
      for (const lifecycle of lifecycles) queued.push(...(await lifecycle.queueRemovals(tx, environmentIds, removal)));
      return queued;
    },
    removeRoutes: (tx, owner, remove, field) => proxy.removing(tx, owner, remove, field),
    notify: () => outbox.notify(),
    removeArchiveFiles,
  };
  const bind = (bound: { lifecycles: typeof lifecycles; sweepArchives: () => Promise<number> }) => {
    lifecycles = bound.lifecycles;
    sweepArchives = bound.sweepArchives;
  };
  return { workloads, removeArchiveFiles, bind };
}
