import type { Application } from '@skiff/db';
import { PLATFORM_NETWORK, type WorkloadSpecInput, wireServerId } from '@skiff/domain';
import { type Command, CommandKind, type RegistryAuth, WorkloadKind, timestampFromDate } from '@skiff/proto';

/** How long an agent has to finish a deploy before it ends as expired (ARCHITECTURE.md: every step has a deadline). */
export const DEPLOY_DEADLINE_MS = 15 * 60_000;

/** `<workload kind>:<workload id>`: the key of a workload's FIFO queue on its agent. */
export const workloadKey = (kind: 'application' | 'compose' | 'cache', id: string) => `${kind}:${id}`;

/**
 * The settings of an application's Swarm service, from its columns. `env` is left empty:
 * the resolved variables travel once, in DeployApplication.env (they are secrets).
 * `forceUpdate` grows with every deployment, so each deploy rolls the tasks out anew even
 * when nothing in the spec changed (a moved `:latest` tag, a redeploy).
 */
export function applicationWorkloadSpec(app: Application, forceUpdate: number): WorkloadSpecInput {
  return {
    appName: app.appName,
    kind: 'application',
    id: app.id,
    image: app.containerImage ?? '',
    env: [],
    command: app.command,
    args: app.args,
    replicas: app.replicas,
    memoryLimit: app.memoryLimit,
    memoryReservation: app.memoryReservation,
    cpuLimit: app.cpuLimit,
    cpuReservation: app.cpuReservation,
    platformNetwork: PLATFORM_NETWORK,
    forceUpdate,
    healthCheckCluster: app.healthCheckCluster as WorkloadSpecInput['healthCheckCluster'],
    restartPolicyCluster: app.restartPolicyCluster as WorkloadSpecInput['restartPolicyCluster'],
    placementCluster: app.placementCluster as WorkloadSpecInput['placementCluster'],
    updateConfigCluster: app.updateConfigCluster as WorkloadSpecInput['updateConfigCluster'],
    rollbackConfigCluster: app.rollbackConfigCluster as WorkloadSpecInput['rollbackConfigCluster'],
    modeCluster: app.modeCluster as WorkloadSpecInput['modeCluster'],
    labelsCluster: app.labelsCluster as WorkloadSpecInput['labelsCluster'],
    networkCluster: app.networkCluster as WorkloadSpecInput['networkCluster'],
    stopGracePeriodCluster: app.stopGracePeriodCluster as WorkloadSpecInput['stopGracePeriodCluster'],
    endpointSpecCluster: app.endpointSpecCluster as WorkloadSpecInput['endpointSpecCluster'],
    ulimitsCluster: app.ulimitsCluster as WorkloadSpecInput['ulimitsCluster'],
  };
}

export interface DeployCommandInput {
  commandId: string;
  deploymentId: string;
  app: Application;
  spec: WorkloadSpecInput;
  /** The resolved environment (values are secrets). */
  env: Map<string, string>;
  /** The login to the image's private registry (applicationRegistryAuth); the password is a secret. */
  registryAuth?: RegistryAuth;
  createdAt: Date;
  deadline: Date;
}

/** The DeployApplication command for one deployment of an application. */
export function deployApplicationCommand(input: DeployCommandInput): Command {
  const { app } = input;
  return {
    commandId: input.commandId,
    serverId: wireServerId(app.serverId),
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: workloadKey('application', app.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: input.deploymentId,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: app.id, appName: app.appName },
        image: input.spec.image,
        env: Object.fromEntries(input.env),
        replicas: input.spec.replicas,
        forcePull: false,
        specJson: JSON.stringify(input.spec),
        registryAuth: input.registryAuth,
      },
    },
  };
}
