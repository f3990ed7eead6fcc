import { type WorkloadSpecInput, workloadSpecFromWire } from '@skiff/domain';
import { type DeployApplication, WorkloadKind } from '@skiff/proto';

/**
 * The service settings a DeployApplication carries, as the agent reads them, with the
 * workload and image of the command. `env` is left empty: the variables travel once, in the
 * command's `env` map, and the spec has no field for them.
 */
export function sentSpec(deploy: DeployApplication): WorkloadSpecInput {
  if (!deploy.spec) throw new Error('the deploy carries no spec');
  if ('env' in deploy.spec) throw new Error('the spec carries an env');
  const workload = deploy.workload!;
  const kind = workload.kind === WorkloadKind.WORKLOAD_KIND_CACHE ? 'cache' : 'application';
  return workloadSpecFromWire(deploy.spec, { appName: workload.appName, id: workload.id, kind, image: deploy.image, env: [] });
}
