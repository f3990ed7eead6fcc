/**
 * Rollbacks: a done deployment of an application put back as a new deployment record (title
 * `Rollback`, its own log), with the image that deployment ran and the application's current
 * settings and environment; nothing is built. `deployment.rollback` does it for a caller;
 * a crash loop does it by itself when the application's `rollbackActive` is on (crash-loops.ts).
 *
 * A built image (`<appName>:<deploymentId>`) lives only on the server: while rollbackActive
 * is on, the agent keeps those of the newest `rollbackImages` done deployments (the deploy
 * command's keep_images); without it only what the service runs and what it ran before. A
 * rollback to a deployment whose image is not kept is refused here; one whose image a
 * cleanup removed anyway fails on the agent at once, naming the image.
 */
import { sql } from 'kysely';
import type { Db, Deployment } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import { applicationWorkloadSpec, builtImageName, deployApplicationCommand, deployDeadlineMs } from '../../agents/outbound/kinds/deploy-application.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import { deploymentRecord, envSourcesOf, insertDeployment } from './deployment-records.js';
import { applicationRegistryAuth } from './registry-auth.js';
import { lockWorkloadForWork } from './workloads.js';
import { EnvError, resolveServiceVariables } from '@skiff/domain';

export const DEFAULT_ROLLBACK_IMAGES = 3;

/** Images of the application's newest `keep` done deployments that the agent built. */
export async function rollbackImages(db: Db, applicationId: string, keep = DEFAULT_ROLLBACK_IMAGES): Promise<string[]> {
  const rows = await newestDone(db, applicationId, keep);
  const app = await db.selectFrom('applications').select('appName').where('id', '=', applicationId).executeTakeFirstOrThrow();
  return rows.filter((d) => d.image === builtImageName(app.appName, d.id)).map((d) => d.image!);
}

function newestDone(db: Db, applicationId: string, limit: number) {
  return db
    .selectFrom('deployments')
    .select(['id', 'image'])
    .where('applicationId', '=', applicationId)
    .where('status', '=', 'done')
    .orderBy('finishedAt', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export class Rollbacks {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
  ) {}

  /** `deployment.rollback`: BAD_REQUEST naming `deploymentId` when it cannot be put back. */
  async rollback(p: Principal, deploymentId: string) {
    const target = await this.deps.db.selectFrom('deployments').selectAll().where('id', '=', deploymentId).executeTakeFirst();
    if (!target) throw NotFound('No such deployment');
    if (!target.applicationId) {
      await this.access.through(p, 'compose', target.composeId!, 'deployment');
      throw Invalid('deploymentId', "a compose stack's deployments cannot be rolled back to: redeploy the stack");
    }
    const located = await this.access.through(p, 'application', target.applicationId, 'deployment');
    return this.queue(located, target, `Rollback to deployment ${target.id}`);
  }

  /**
   * After a crash loop of `crashed`: the application's newest done deployment before it, put
   * back; null when there is none to go back to (the reason is answered instead).
   */
  async afterCrashLoop(applicationId: string, crashed: string): Promise<{ deploymentId: string } | { none: string }> {
    const candidates = await newestDone(this.deps.db, applicationId, 1 + (this.deps.rollbackImages ?? DEFAULT_ROLLBACK_IMAGES));
    const previous = candidates.find((d) => d.id !== crashed && d.image !== null);
    if (!previous) return { none: 'no earlier done deployment to roll back to' };
    const target = await this.deps.db.selectFrom('deployments').selectAll().where('id', '=', previous.id).executeTakeFirstOrThrow();
    const located = await this.locate(applicationId);
    try {
      const record = await this.queue(located, target, `Rollback to deployment ${target.id} (crash loop of ${crashed})`);
      return { deploymentId: record.deploymentId };
    } catch (err) {
      if ((err as { code?: string }).code === 'BAD_REQUEST') return { none: (err as Error).message };
      throw err;
    }
  }

  private async locate(applicationId: string): Promise<Located<'application'>> {
    const db = this.deps.db;
    const row = await db.selectFrom('applications').selectAll().where('id', '=', applicationId).executeTakeFirstOrThrow();
    const environment = await db.selectFrom('environments').selectAll().where('id', '=', row.environmentId).executeTakeFirstOrThrow();
    const project = await db.selectFrom('projects').selectAll().where('id', '=', environment.projectId).executeTakeFirstOrThrow();
    return { row, environment, project };
  }

  private async queue(located: Located<'application'>, target: Deployment, description: string) {
    const app = located.row;
    if (target.status !== 'done') throw Invalid('deploymentId', `only a done deployment can be rolled back to (this one is ${target.status})`);
    if (!target.image) throw Invalid('deploymentId', 'the image of this deployment is not known (it ran before Skiff kept deployment images)');
    const built = target.image === builtImageName(app.appName, target.id);
    if (built && !(await this.kept(app.id, target.id, app.rollbackActive === true))) {
      throw Invalid(
        'deploymentId',
        `the image of this deployment is gone: Skiff keeps the built images of the newest ${this.deps.rollbackImages ?? DEFAULT_ROLLBACK_IMAGES} done deployments only while rollbackActive is on (and the previous one otherwise)`,
      );
    }
    let env: Map<string, string>;
    try {
      env = resolveServiceVariables(envSourcesOf(this.deps.secrets, located));
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
    const now = this.deps.clock();
    const deploymentId = this.deps.ids('dep');
    const row = await this.deps.db.transaction().execute(async (tx) => {
      await lockWorkloadForWork(tx, { kind: 'application', id: app.id });
      const { deployCount } = await tx
        .updateTable('applications')
        .set({ deployCount: sql<number>`deploy_count + 1` })
        .where('id', '=', app.id)
        .returning('deployCount')
        .executeTakeFirstOrThrow();
      const spec = { ...applicationWorkloadSpec(app, deployCount), image: target.image! };
      const deployment = await insertDeployment(tx, { kind: 'application', id: app.id, serverId: app.serverId }, { deploymentId, how: 'rollback', description, image: spec.image });
      const keepImages = app.rollbackActive ? await rollbackImages(tx, app.id, this.deps.rollbackImages) : [];
      const command = deployApplicationCommand({
        commandId: this.deps.ids('cmd'),
        deploymentId,
        app,
        spec,
        env,
        registryAuth: built || !app.containerImage ? undefined : applicationRegistryAuth(app, (sealed) => this.deps.secrets.open(sealed)),
        keepImages,
        localImage: built,
        createdAt: now,
        deadline: new Date(now.getTime() + deployDeadlineMs(false)),
      });
      await this.outbox.queue(tx, command, { deploymentId });
      return deployment;
    });
    this.outbox.notify();
    return deploymentRecord(row);
  }

  /** Whether the agent keeps the built image of `deploymentId` (see above). */
  private async kept(applicationId: string, deploymentId: string, rollbackActive: boolean): Promise<boolean> {
    const keep = rollbackActive ? (this.deps.rollbackImages ?? DEFAULT_ROLLBACK_IMAGES) : 2;
    return (await newestDone(this.deps.db, applicationId, keep)).some((d) => d.id === deploymentId);
  }
}
