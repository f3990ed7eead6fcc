/**
 * The Swarm service spec a DeployApplication command asks for. Pure.
 *
 * The command's `spec` (WorkloadSpec) carries the service's settings; its `workload` names
 * the service and its kind (an application or a cache instance), `image` and `env` complete
 * them; replicas 0 means the platform default (1). A command without `spec` comes from a
 * control plane older than the typed spec: its `spec_json` (libs/domain's WorkloadSpecInput
 * as JSON, whose `image`, `env` and `replicas` give way to the command's fields) is read
 * instead, and one naming another appName, id or kind is refused.
 * The result carries `skiff.deployment=<deploymentId>` on the service and its containers,
 * so the tasks of this rollout can be told apart from the previous version's (and a new
 * deployment of an unchanged spec still rolls out new tasks).
 */
import { PLATFORM_NETWORK, swarmServiceSpec, type WorkloadSpecInput, workloadSpecFromWire } from '@skiff/domain';
import { WorkloadKind, type DeployApplication } from '@skiff/proto';
import type { ServiceSpec } from '../docker/driver.js';
import { fileBinds } from './file-mounts.js';

export const DEPLOYMENT_LABEL = 'skiff.deployment';
export const DEFAULT_REPLICAS = 1;

/** The command's arguments cannot make a spec; the message names fields, never values of env. */
export class DeploySpecError extends Error {
  override name = 'DeploySpecError';
}

/** The workload kinds DeployApplication rolls out as one Swarm service. */
const SERVICE_KINDS: Partial<Record<WorkloadKind, WorkloadSpecInput['kind']>> = {
  [WorkloadKind.WORKLOAD_KIND_APPLICATION]: 'application',
  [WorkloadKind.WORKLOAD_KIND_CACHE]: 'cache',
};

export function workloadSpecInput(deploy: DeployApplication): WorkloadSpecInput {
  const workload = deploy.workload;
  if (!workload || workload.appName === '' || workload.id === '') {
    throw new DeploySpecError('the command names no workload (appName and id)');
  }
  const kind = SERVICE_KINDS[workload.kind];
  if (!kind) throw new DeploySpecError('DeployApplication deploys applications and cache instances only');
  const env = Object.keys(deploy.env)
    .sort()
    .map((key) => `${key}=${deploy.env[key]}`);
  if (deploy.spec) {
    const input = workloadSpecFromWire(deploy.spec, { appName: workload.appName, id: workload.id, kind, image: deploy.image, env });
    return { ...input, replicas: input.replicas > 0 ? input.replicas : DEFAULT_REPLICAS };
  }
  return legacySpecInput(deploy, { appName: workload.appName, id: workload.id, kind, env });
}

/** The settings of a command from a control plane that sends `spec_json` instead of `spec`. */
function legacySpecInput(
  deploy: DeployApplication,
  workload: { appName: string; id: string; kind: WorkloadSpecInput['kind']; env: string[] },
): WorkloadSpecInput {
  const { kind } = workload;
  let parsed: unknown = {};
  if (deploy.specJson.trim() !== '') {
    try {
      parsed = JSON.parse(deploy.specJson);
    } catch (err) {
      throw new DeploySpecError(`spec_json is not JSON: ${(err as Error).message}`);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new DeploySpecError('spec_json must be a JSON object (a WorkloadSpecInput)');
  }
  const spec = parsed as Partial<WorkloadSpecInput>;
  if (spec.appName !== undefined && spec.appName !== workload.appName) {
    throw new DeploySpecError(`spec_json names service "${String(spec.appName)}" but the command deploys "${workload.appName}"`);
  }
  if (spec.id !== undefined && spec.id !== workload.id) {
    throw new DeploySpecError(`spec_json names workload id "${String(spec.id)}" but the command deploys "${workload.id}"`);
  }
  if (spec.kind !== undefined && spec.kind !== kind) {
    throw new DeploySpecError(`spec_json has kind "${String(spec.kind)}" but the command deploys a workload of kind ${kind}`);
  }
  return {
    command: null,
    args: null,
    memoryLimit: null,
    memoryReservation: null,
    cpuLimit: null,
    cpuReservation: null,
    platformNetwork: PLATFORM_NETWORK,
    ...spec,
    appName: workload.appName,
    id: workload.id,
    kind,
    image: deploy.image,
    env: workload.env,
    replicas: deploy.replicas > 0 ? deploy.replicas : DEFAULT_REPLICAS,
  };
}

/**
 * The service spec, labelled with the deployment; the command's files are bound read-only from
 * `filesDir` (file-mounts.ts), which they need. Throws DeploySpecError, SwarmSpecError or FileMountError.
 */
export function deployServiceSpec(deploy: DeployApplication, filesDir?: string): ServiceSpec {
  if (deploy.deploymentId === '') throw new DeploySpecError('the command names no deployment');
  const input = workloadSpecInput(deploy);
  const files = deploy.files ?? [];
  if (files.length > 0) {
    if (input.kind !== 'application') throw new DeploySpecError('only applications have file mounts');
    if (!filesDir) throw new DeploySpecError('file mounts need the agent\'s data directory, which this agent was not given');
    input.binds = [...(input.binds ?? []), ...fileBinds(filesDir, files)];
  }
  const spec: ServiceSpec = swarmServiceSpec(input);
  const container = spec.TaskTemplate.ContainerSpec;
  return {
    ...spec,
    Labels: { ...spec.Labels, [DEPLOYMENT_LABEL]: deploy.deploymentId },
    TaskTemplate: {
      ...spec.TaskTemplate,
      ContainerSpec: { ...container, Labels: { ...container.Labels, [DEPLOYMENT_LABEL]: deploy.deploymentId } },
    },
  };
}
