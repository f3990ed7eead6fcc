import type { ComposeStack } from '@skiff/db';
import { EnvError, composeDotenv, wireServerId } from '@skiff/domain';
import { type BuildSource, type Command, CommandKind, type ComposeConversion, ComposeType, timestampFromDate } from '@skiff/proto';
import type { Principal } from '../authz/principal.js';
import { Invalid } from '../errors.js';
import type { CommandOutbox } from './command-outbox.js';
import { composePathOf, convertOrRefuse, customCommandArgs, deploySettings, refuseForgeSource, routedServices } from './compose-files.js';
import { BUILD_DEPLOY_DEADLINE_MS, workloadKey } from './deploy-command.js';
import { deploymentRecord, envSourcesOf, insertDeployment } from './deployments.js';
import type { ServiceDeps } from './deps.js';
import { plainGitSource } from './git-sources.js';
import type { Located, ServiceAccess } from './service-access.js';
import { lockWorkloadForWork } from './workload-commands.js';
import { DEPLOYED_KINDS } from './workloads.js';

export interface ComposeDeployOptions {
  /** Called after a command was committed, so the relay publishes it without waiting for its poll. */
  onCommandQueued?: () => void;
  /** How long the agent has to fetch, pull or build and bring the stack up. Default BUILD_DEPLOY_DEADLINE_MS. */
  deadlineMs?: number;
}

const COMPOSE_TYPES: Record<string, ComposeType> = {
  'container-compose': ComposeType.COMPOSE_TYPE_CONTAINER_COMPOSE,
  stack: ComposeType.COMPOSE_TYPE_STACK,
};

/** Where the agent takes the compose file from: the raw text, or a git source and the file's path in it. */
type ComposeSource = { composeText: string; source?: undefined; composePath: '' } | { composeText: ''; source: BuildSource; composePath: string };

/**
 * `compose.deploy` and `compose.redeploy`: the `queued` deployment and its DeployCompose
 * command, in one transaction that holds the stack's row (so its jobs reach the agent in the
 * order they were accepted; none while it is being deleted). Everything the agent would refuse
 * and the control plane can tell is refused first, as BAD_REQUEST naming the field, with
 * nothing queued: the source settings, a raw file that does not convert, the environment, the
 * custom command. Agents' reports move the deployment and the stack's status
 * (DeploymentReports), as for applications.
 */
export class ComposeDeployments {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
    private readonly options: ComposeDeployOptions = {},
  ) {}

  async deploy(p: Principal, input: { composeId: string; title?: string; description?: string }, how: 'deploy' | 'redeploy') {
    const located = await this.access.find(p, 'compose', input.composeId);
    const { row } = located;
    const routed = await routedServices(this.deps.db, row.id);
    const settings = deploySettings(row, routed);
    const source = await this.source(located);
    // A raw file is converted now, so a file the agent would refuse is refused here.
    if (source.source === undefined) convertOrRefuse(row, settings);
    const composeType = COMPOSE_TYPES[row.composeType];
    if (composeType === undefined) throw Invalid('composeType', `unknown compose type ${row.composeType}`);
    const command = customCommandArgs(row);
    const envFile = this.envFile(located);

    const now = this.deps.clock();
    const deploymentId = this.deps.ids('dep');
    const deployment = await this.deps.db.transaction().execute(async (tx) => {
      const owner = { kind: 'compose' as const, id: row.id };
      await lockWorkloadForWork(tx, owner);
      const created = await insertDeployment(tx, { ...owner, serverId: row.serverId }, { deploymentId, title: input.title, description: input.description, how });
      const conversion: ComposeConversion = {
        randomize: settings.randomize,
        suffix: settings.randomize ? (settings.suffix ?? '') : '',
        isolated: settings.isolatedDeployment,
        isolatedVolumes: settings.isolatedDeployment && settings.isolatedDeploymentsVolume,
        routedServices: routed,
      };
      const deadline = new Date(now.getTime() + (this.options.deadlineMs ?? BUILD_DEPLOY_DEADLINE_MS));
      await this.outbox.queue(tx, deployComposeCommand({ commandId: this.deps.ids('cmd'), deploymentId, row, composeType, source, conversion, envFile, command, createdAt: now, deadline }), {
        deploymentId,
      });
      return created;
    });
    this.options.onCommandQueued?.();
    return deploymentRecord(deployment);
  }

  private async source(located: Located<'compose'>): Promise<ComposeSource> {
    const { row } = located;
    switch (row.sourceType) {
      case 'raw':
        return { composeText: row.composeFile, composePath: '' };
      case 'git':
        return { composeText: '', source: await plainGitSource(this.deps, located, 'compose.update'), composePath: composePathOf(row) };
      default:
        return refuseForgeSource(row.sourceType);
    }
  }

  /** The `.env` text: the stack's variables over its environment's and project's, references resolved. */
  private envFile(located: Located<'compose'>): string {
    try {
      return composeDotenv(envSourcesOf(this.deps.secrets, located));
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
  }
}

interface DeployComposeInput {
  commandId: string;
  deploymentId: string;
  row: ComposeStack;
  composeType: ComposeType;
  source: ComposeSource;
  conversion: ComposeConversion;
  envFile: string;
  command: string[];
  createdAt: Date;
  deadline: Date;
}

/** The DeployCompose command of one deployment of a stack (proto/skiff/agent/v1/command.proto). */
export function deployComposeCommand(input: DeployComposeInput): Command {
  const { row } = input;
  return {
    commandId: input.commandId,
    serverId: wireServerId(row.serverId),
    kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE,
    workloadKey: workloadKey('compose', row.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: {
      $case: 'deployCompose',
      value: {
        deploymentId: input.deploymentId,
        workload: { kind: DEPLOYED_KINDS.compose.wire, id: row.id, appName: row.appName },
        composeType: input.composeType,
        composeText: input.source.composeText,
        source: input.source.source,
        composePath: input.source.composePath,
        conversion: input.conversion,
        envFile: input.envFile,
        command: input.command,
      },
    },
  };
}
