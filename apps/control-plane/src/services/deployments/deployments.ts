import { sql } from 'kysely';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Application } from '@skiff/db';
import { EnvError, SwarmSpecError, envList, parseDotenv, resolveServiceVariables, swarmServiceSpec } from '@skiff/domain';
import type { BuildRecipe, BuildSource, RegistryAuth } from '@skiff/proto';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../../errors.js';
import { applicationWorkloadSpec, buildRecipe, builtImageName, deployApplicationCommand, deployDeadlineMs } from '../../agents/outbound/kinds/deploy-application.js';
import { assertNoForeignNetworks } from '../shared/networks.js';
import { deployMounts } from '../mounts/deploy-mounts.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { archiveOf, archiveSourceOf, latestArchive } from './archive-records.js';
import type { ServiceDeps } from '../shared/deps.js';
import { plainGitSource } from './git-sources.js';
import { FORGE_BUILD_PATHS, forgeGitSource, isForgeSource } from './forge-sources.js';
import type { ForgeRepositories } from '../forges/forge-repositories.js';
import { deploymentRecord, envSourcesOf, insertDeployment } from './deployment-records.js';
import { Rollbacks, rollbackImages } from './rollback.js';
import { applicationRegistryAuth } from './registry-auth.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import { DEPLOYED_KINDS, type DeployedKind, lockWorkloadForWork, ownerOfDeployment } from './workloads.js';
import { takeReserved } from './deferred-deploys.js';
import { buildableCommit, forkGitSource, previewApplication } from '../applications/preview-application.js';

export { deploymentRecord, envSourcesOf, insertDeployment };

type DeploymentLog = OutputOf<Contracts['deployment']['readLogs']>;

export interface DeployInput {
  applicationId: string;
  title?: string;
  description?: string;
}


/** What a deploy runs: a registry image, or a source to build and the tag of its result. */
type DeployPlan =
  | { kind: 'image'; registryAuth: RegistryAuth | undefined }
  | { kind: 'build'; source: BuildSource; recipe: BuildRecipe };

/**
 * Deployments of applications (compose stacks: compose-deploy.ts): queueing one (a `deployments` row and its command, in one
 * transaction), and reading their history and logs. Agents' reports move them on
 * (DeploymentReports).
 */
export class DeploymentService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
    /** Forge connections, for forge sources (a login minted per deploy). */
    private readonly forges?: ForgeRepositories,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /**
   * `application.deploy` and `application.redeploy`: answers the queued deployment.
   *
   * By sourceType: `container` runs the registry image (with its registry login); `git`
   * (customGitUrl, customGitBranch, customGitBuildPath, enableSubmodules, the private key
   * of customGitSSHKeyId) and `drop` (the newest uploaded archive, dropBuildPath) are built
   * by the agent as buildType says and run as `<appName>:<deploymentId>` (builtImageName);
   * forge sources (forgeA..D) are cloned like `git` from the address the forge gives for the
   * repository, with a login minted for this deploy (forge-sources.ts). A missing setting
   * is BAD_REQUEST naming it.
   */
  async deploy(p: Principal, input: DeployInput, how: 'deploy' | 'redeploy', source: { archiveId?: string } = {}, options: { reserved?: string } = {}) {
    const located = await this.access.find(p, 'application', input.applicationId);
    return this.queue(located, input, how, source, { ...options, preview: null, commit: null });
  }

  /**
   * A preview's deploy: its parent application as the preview derives it (previewApplication:
   * the pull request's branch, previewEnv, previewBuildArgs/Secrets, its own name), recorded as
   * a deployment of the parent marked with the preview. `reserved`: the queued deployment
   * recorded earlier (DeferredDeploys), used instead of a new one. It builds the pull request's
   * head commit (recorded on the deployment; the agent checks it out after the clone).
   */
  async deployPreview(p: Principal, previewDeploymentId: string, input: { title: string; reserved?: string }) {
    const preview = await this.db.selectFrom('previewDeployments').selectAll().where('id', '=', previewDeploymentId).executeTakeFirst();
    if (!preview) throw NotFound('No such preview deployment');
    const located = await this.access.find(p, 'application', preview.applicationId);
    const row = previewApplication(located.row, preview);
    const commit = buildableCommit(preview.headCommit);
    return this.queue({ ...located, row }, { applicationId: located.row.id, title: input.title }, 'deploy', {}, { reserved: input.reserved, preview: preview.id, commit, fork: preview.forkCloneUrl });
  }

  private async queue(
    located: Located<'application'>,
    input: DeployInput,
    how: 'deploy' | 'redeploy',
    source: { archiveId?: string },
    /** `commit`: the one to build (a preview's head commit), recorded on the deployment; null: the branch's head. */
    options: { reserved?: string; preview: string | null; commit: string | null; fork?: string | null },
  ) {
    const app = located.row;
    // A preview's row is derived (its own id and name); the parent's record holds its deployments.
    const ownerId = options.preview ? input.applicationId : app.id;
    const plan = await this.plan(located, source);
    const commit = plan.kind === 'build' && plan.source.kind?.$case === 'git' ? options.commit : null;
    if (commit && plan.kind === 'build' && plan.source.kind?.$case === 'git') plan.source.kind.value.commit = commit;
    // A fork's pull request is built from the fork (forkGitSource: the base's login stays on the base's host).
    if (options.fork && plan.kind === 'build' && plan.source.kind?.$case === 'git') plan.source.kind.value = forkGitSource(plan.source.kind.value, options.fork);
    const env = this.resolveEnv(located);

    const now = this.deps.clock();
    const deploymentId = options.reserved ?? this.deps.ids('dep');
    const commandId = this.deps.ids('cmd');
    const registryAuth = plan.kind === 'image' ? plan.registryAuth : undefined;
    const deadlineMs = deployDeadlineMs(plan.kind === 'build');
    const row = await this.db.transaction().execute(async (tx) => {
      // One application's commands are written one after the other; none while it is being deleted.
      await lockWorkloadForWork(tx, { kind: 'application', id: ownerId });
      // A counter, not a count of deployment records: those are pruned (deployment-retention.ts).
      const { deployCount } = await tx
        .updateTable('applications')
        .set({ deployCount: sql<number>`deploy_count + 1` })
        .where('id', '=', ownerId)
        .returning('deployCount')
        .executeTakeFirstOrThrow();
      const spec = applicationWorkloadSpec(app, deployCount);
      if (plan.kind === 'build') spec.image = builtImageName(app.appName, deploymentId);
      const mounts = await deployMounts(tx, this.deps.secrets, app, located.project.organizationId);
      spec.volumes = mounts.volumes;
      spec.binds = mounts.binds;
      checkSpec(app, spec, env);
      await assertNoForeignNetworks(tx, located.project.organizationId, app.serverId, app);
      const deployment = options.reserved
        ? await takeReserved(tx, options.reserved, spec.image, commit)
        : await insertDeployment(
            tx,
            { kind: 'application', id: ownerId, serverId: app.serverId },
            { deploymentId, title: input.title, description: input.description, how, image: spec.image, previewDeploymentId: options.preview, commit },
          );
      // Cancelled while its login was being minted: nothing is queued.
      if (deployment.status !== 'queued') return deployment;
      const keepImages = app.rollbackActive && !options.preview ? await rollbackImages(tx, app.id, this.deps.rollbackImages) : [];
      const command = deployApplicationCommand({
        commandId,
        deploymentId,
        app,
        spec,
        env,
        registryAuth,
        files: mounts.files,
        build: plan.kind === 'build' ? { source: plan.source, recipe: plan.recipe } : undefined,
        keepImages,
        createdAt: now,
        deadline: new Date(now.getTime() + deadlineMs),
      });
      await this.outbox.queue(tx, command, { deploymentId });
      return deployment;
    });
    this.outbox.notify();
    return deploymentRecord(row);
  }

  /** What the deploy runs, from the application's source settings. Throws Invalid naming the missing field. */
  /** `archiveId`: the upload this deploy builds (application.dropDeployment); default the newest. */
  private async plan(located: Located<'application'>, { archiveId }: { archiveId?: string }): Promise<DeployPlan> {
    const app = located.row;
    switch (app.sourceType) {
      case 'container': {
        if (!app.containerImage) throw Invalid('containerImage', 'no image set (application.saveContainerProvider)');
        return { kind: 'image', registryAuth: applicationRegistryAuth(app, (sealed) => this.deps.secrets.open(sealed)) };
      }
      case 'git': {
        const source = await plainGitSource(this.deps, located, 'application.saveGitProvider');
        return { kind: 'build', source, recipe: buildRecipe(app, app.customGitBuildPath, this.resolveBuildVariables(located)) };
      }
      case 'drop': {
        const archive = await (archiveId ? archiveOf(this.db, app.id, archiveId) : latestArchive(this.db, app.id));
        if (!archive) throw Invalid('archive', 'no archive uploaded for this application (application.dropDeployment)');
        const source: BuildSource = { kind: { $case: 'archive', value: archiveSourceOf(archive) } };
        return { kind: 'build', source, recipe: buildRecipe(app, app.dropBuildPath, this.resolveBuildVariables(located)) };
      }
      default:
        if (isForgeSource(app.sourceType)) {
          const source = await forgeGitSource(this.deps, this.forges, located, 'application');
          return { kind: 'build', source, recipe: buildRecipe(app, app[FORGE_BUILD_PATHS[app.sourceType]], this.resolveBuildVariables(located)) };
        }
        throw Invalid('sourceType', `sourceType ${app.sourceType} cannot be deployed`);
    }
  }

  /**
   * Build arguments and build secrets: dotenv texts (sealed), with the same `${{…}}`
   * references as env (`${{project.NAME}}`, `${{environment.NAME}}`, and `${{NAME}}` for
   * another entry of the same text); only the names the text defines are passed.
   */
  private resolveBuildVariables(located: Located<'application'>) {
    const { row } = located;
    const sources = envSourcesOf(this.deps.secrets, located);
    const resolve = (field: 'buildArgs' | 'buildSecrets') => {
      const text = row[field] ? this.deps.secrets.open(row[field]) : '';
      try {
        const all = resolveServiceVariables({ ...sources, service: text });
        const own = parseDotenv(text).variables;
        return new Map([...all].filter(([name]) => own.has(name)));
      } catch (err) {
        if (err instanceof EnvError) throw Invalid(field, err.message.replace(/\bservice env\b/, field));
        throw err;
      }
    };
    return { buildArgs: resolve('buildArgs'), buildSecrets: resolve('buildSecrets') };
  }

  /** The service's variables over its environment's and project's, references resolved. */
  private resolveEnv(located: Located<'application'>): Map<string, string> {
    try {
      return resolveServiceVariables(envSourcesOf(this.deps.secrets, located));
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
  }

  /** `deployment.rollback` (rollback.ts). */
  rollback(p: Principal, deploymentId: string) {
    return new Rollbacks(this.deps, this.access, this.outbox).rollback(p, deploymentId);
  }

  /** `deployment.all` (an application's) and `deployment.allByCompose`: newest first, without logs. */
  async all(p: Principal, kind: DeployedKind, id: string) {
    await this.access.find(p, kind, id);
    const rows = await this.db
      .selectFrom('deployments')
      .select(['id', 'applicationId', 'composeId', 'serverId', 'status', 'title', 'description', 'reason', 'createdAt', 'startedAt', 'finishedAt', 'lastSequence', 'previewDeploymentId'])
      .where(DEPLOYED_KINDS[kind].deploymentColumn, '=', id)
      // A preview's deployments are listed with the preview (previewDeployment.one).
      .where('previewDeploymentId', 'is', null)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => deploymentRecord({ ...r, log: '', image: null, commit: null }));
  }

  /** `deployment.readLogs`: the deployment's status and kept log lines. */
  async readLogs(p: Principal, deploymentId: string): Promise<DeploymentLog> {
    const d = await this.db.selectFrom('deployments').selectAll().where('id', '=', deploymentId).executeTakeFirst();
    if (!d) throw NotFound('No such deployment');
    const owner = ownerOfDeployment(d);
    await this.access.through(p, owner.kind, owner.id, 'deployment');
    return { deploymentId: d.id, status: d.status, reason: d.reason, log: d.log };
  }
}

/** The agent would refuse a spec the builder refuses: say so now, before anything is queued. */
function checkSpec(app: Application, spec: ReturnType<typeof applicationWorkloadSpec>, env: Map<string, string>) {
  try {
    swarmServiceSpec({ ...spec, env: envList(env) });
  } catch (err) {
    if (err instanceof SwarmSpecError) {
      throw new DomainError('BAD_REQUEST', `Cannot deploy ${app.appName}: ${err.message}`);
    }
    throw err;
  }
}
