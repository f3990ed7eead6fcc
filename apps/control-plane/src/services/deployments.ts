import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Application, Deployment } from '@skiff/db';
import { EnvError, LOCAL_SERVER_ID, SwarmSpecError, envList, resolveServiceVariables, swarmServiceSpec, wireServerId } from '@skiff/domain';
import type { Principal } from '../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../errors.js';
import type { CommandOutbox } from './command-outbox.js';
import { DEPLOY_DEADLINE_MS, applicationWorkloadSpec, deployApplicationCommand } from './deploy-command.js';
import { type ServiceDeps, iso } from './deps.js';
import { applicationRegistryAuth } from './registry-auth.js';
import { lockApplicationForWork } from './workload-commands.js';
import type { Located, ServiceAccess } from './service-access.js';

type DeploymentRecord = OutputOf<Contracts['deployment']['all']>[number];
type DeploymentLog = OutputOf<Contracts['deployment']['readLogs']>;

export const deploymentRecord = (d: Deployment): DeploymentRecord => ({
  deploymentId: d.id,
  applicationId: d.applicationId,
  serverId: d.serverId === LOCAL_SERVER_ID ? null : d.serverId,
  status: d.status,
  title: d.title,
  description: d.description,
  reason: d.reason,
  createdAt: iso(d.createdAt),
  startedAt: d.startedAt ? iso(d.startedAt) : null,
  finishedAt: d.finishedAt ? iso(d.finishedAt) : null,
});

export interface DeployInput {
  applicationId: string;
  title?: string;
  description?: string;
}

export interface DeploymentServiceOptions {
  /** Called after a command was committed, so the relay publishes it without waiting for its poll. */
  onCommandQueued?: () => void;
  deadlineMs?: number;
}

/**
 * Deployments of applications: queueing one (a `deployments` row and its command, in one
 * transaction), and reading their history and logs. Agents' reports move them on
 * (DeploymentReports).
 */
export class DeploymentService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
    private readonly options: DeploymentServiceOptions = {},
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** `application.deploy` and `application.redeploy`: answers the queued deployment. */
  async deploy(p: Principal, input: DeployInput, how: 'deploy' | 'redeploy') {
    const located = await this.access.find(p, 'application', input.applicationId);
    const app = located.row;
    if (app.sourceType !== 'container') {
      throw Invalid(
        'sourceType',
        `building from ${app.sourceType} comes later: only registry images (sourceType container) deploy for now`,
      );
    }
    if (!app.containerImage) throw Invalid('containerImage', 'no image set (application.saveContainerProvider)');
    const registryAuth = applicationRegistryAuth(app, (sealed) => this.deps.secrets.open(sealed));
    const env = this.resolveEnv(located);

    const now = this.deps.clock();
    const deploymentId = this.deps.ids('dep');
    const commandId = this.deps.ids('cmd');
    const row = await this.db.transaction().execute(async (tx) => {
      // One application's commands are written one after the other; none while it is being deleted.
      await lockApplicationForWork(tx, app.id);
      const { n } = await tx
        .selectFrom('deployments')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('applicationId', '=', app.id)
        .executeTakeFirstOrThrow();
      const spec = applicationWorkloadSpec(app, Number(n) + 1);
      checkSpec(app, spec, env);
      const deployment = await tx
        .insertInto('deployments')
        .values({
          id: deploymentId,
          applicationId: app.id,
          serverId: wireServerId(app.serverId),
          status: 'queued',
          title: input.title ?? (how === 'redeploy' ? 'Redeploy' : 'Deploy'),
          description: input.description ?? null,
          reason: null,
          startedAt: null,
          finishedAt: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const command = deployApplicationCommand({
        commandId,
        deploymentId,
        app,
        spec,
        env,
        registryAuth,
        createdAt: now,
        deadline: new Date(now.getTime() + (this.options.deadlineMs ?? DEPLOY_DEADLINE_MS)),
      });
      await this.outbox.queue(tx, command, { deploymentId });
      return deployment;
    });
    this.options.onCommandQueued?.();
    return deploymentRecord(row);
  }

  /** The service's variables over its environment's and project's, references resolved. */
  private resolveEnv({ row, environment, project }: Located<'application'>): Map<string, string> {
    const open = (sealed: string | null) => (sealed ? this.deps.secrets.open(sealed) : '');
    try {
      return resolveServiceVariables({ service: open(row.env), environment: open(environment.env), project: open(project.env) });
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
  }

  /** `deployment.all`: newest first, without logs. */
  async all(p: Principal, applicationId: string) {
    await this.access.find(p, 'application', applicationId);
    const rows = await this.db
      .selectFrom('deployments')
      .select(['id', 'applicationId', 'serverId', 'status', 'title', 'description', 'reason', 'createdAt', 'startedAt', 'finishedAt', 'lastSequence'])
      .where('applicationId', '=', applicationId)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => deploymentRecord({ ...r, log: '' }));
  }

  /** `deployment.readLogs`: the deployment's status and kept log lines. */
  async readLogs(p: Principal, deploymentId: string): Promise<DeploymentLog> {
    const d = await this.db.selectFrom('deployments').selectAll().where('id', '=', deploymentId).executeTakeFirst();
    if (!d) throw NotFound('No such deployment');
    await this.access.find(p, 'application', d.applicationId);
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
