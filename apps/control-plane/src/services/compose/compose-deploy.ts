import { EnvError, formatComposeDotenv, resolveServiceVariables } from '@skiff/domain';
import type { ComposeConversion } from '@skiff/proto';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { openConfigFiles } from './config-files.js';
import { COMPOSE_TYPES, type ComposeSource, DEPLOY_COMPOSE_DEADLINE_MS, deployComposeCommand } from '../../agents/outbound/kinds/deploy-compose.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { composePathOf, convertOrRefuse, customCommandArgs, deploySettings, refuseForgeSource, routedServices } from './compose-settings.js';
import { deploymentRecord, envSourcesOf, insertDeployment } from '../deployments/deployments.js';
import type { ServiceDeps } from '../shared/deps.js';
import { plainGitSource } from '../deployments/git-sources.js';
import { forgeGitSource, isForgeSource } from '../deployments/forge-sources.js';
import type { ForgeRepositories } from '../forges/forge-repositories.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import { lockWorkloadForWork } from '../deployments/workloads.js';
import { takeReserved } from '../deployments/deferred-deploys.js';
import { assertNoHostPrivileges, mayUseHostPrivileges } from './host-privileges.js';
import { DEFAULT_MAX_COMPOSE_PORTS, assertHostPortsFree, forbiddenHostPorts, stackHostPorts } from '../shared/published-ports.js';

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
    /** Forge connections, for forge sources (a login minted per deploy). */
    private readonly forges?: ForgeRepositories,
  ) {}

  /** `reserved`: the queued deployment recorded before (DeferredDeploys), used instead of a new one. */
  async deploy(p: Principal, input: { composeId: string; title?: string; description?: string }, how: 'deploy' | 'redeploy', options: { reserved?: string } = {}) {
    const located = await this.access.find(p, 'compose', input.composeId);
    const { row } = located;
    const routed = await routedServices(this.deps.db, row.id);
    const settings = deploySettings(row, routed);
    const source = await this.source(located);
    const variables = this.variables(located);
    // A raw file is converted now, so a file the agent would refuse is refused here.
    if (source.source === undefined) {
      convertOrRefuse(row, settings);
      // Trust may have been taken back since the file was saved.
      await assertNoHostPrivileges(this.deps.db, located.project.organizationId, row.serverId, row.composeFile);
      // Another workload may have taken one of its ports since it was saved (or it was saved before
      // the check); its `${PORT}`s read the variables the deploy passes.
      await assertHostPortsFree(this.deps, row.serverId, stackHostPorts(this.deps, row.composeFile, variables), row.id, 'composeFile');
    }
    // A git source's file is checked by the agent, on the file it fetched (host privileges and ports).
    const allowHostPrivileges = await mayUseHostPrivileges(this.deps.db, located.project.organizationId, row.serverId);
    const forbidden = await forbiddenHostPorts(this.deps, row.serverId, row.id);
    const composeType = COMPOSE_TYPES[row.composeType];
    if (composeType === undefined) throw Invalid('composeType', `unknown compose type ${row.composeType}`);
    const command = customCommandArgs(row);
    const envFile = formatComposeDotenv(variables);
    const configFiles = openConfigFiles(this.deps.secrets, row.configFiles);

    const now = this.deps.clock();
    const deploymentId = options.reserved ?? this.deps.ids('dep');
    const deployment = await this.deps.db.transaction().execute(async (tx) => {
      const owner = { kind: 'compose' as const, id: row.id };
      await lockWorkloadForWork(tx, owner);
      const created = options.reserved
        ? await takeReserved(tx, options.reserved, null)
        : await insertDeployment(tx, { ...owner, serverId: row.serverId }, { deploymentId, title: input.title, description: input.description, how });
      // Cancelled while its login was being minted: nothing is queued.
      if (created.status !== 'queued') return created;
      const conversion: ComposeConversion = {
        randomize: settings.randomize,
        suffix: settings.randomize ? (settings.suffix ?? '') : '',
        isolated: settings.isolatedDeployment,
        isolatedVolumes: settings.isolatedDeployment && settings.isolatedDeploymentsVolume,
        routedServices: routed,
      };
      const deadline = new Date(now.getTime() + DEPLOY_COMPOSE_DEADLINE_MS);
      await this.outbox.queue(tx, deployComposeCommand({ commandId: this.deps.ids('cmd'), deploymentId, row, composeType, source, conversion, envFile, configFiles, command, allowHostPrivileges, forbiddenHostPorts: forbidden, maxHostPorts: this.deps.maxComposePorts ?? DEFAULT_MAX_COMPOSE_PORTS, createdAt: now, deadline }), {
        deploymentId,
      });
      return created;
    });
    this.outbox.notify();
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
        if (isForgeSource(row.sourceType)) {
          return { composeText: '', source: await forgeGitSource(this.deps, this.forges, located, 'compose'), composePath: composePathOf(row) };
        }
        return refuseForgeSource(row.sourceType);
    }
  }

  /** The `.env` variables: the stack's over its environment's and project's, references resolved. */
  private variables(located: Located<'compose'>): Map<string, string> {
    try {
      return resolveServiceVariables(envSourcesOf(this.deps.secrets, located));
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
  }
}
