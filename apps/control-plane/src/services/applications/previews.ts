import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Deployment, PreviewDeployment } from '@skiff/db';
import { deploymentRecord } from '../deployments/deployment-records.js';
import type { Principal } from '../../authz/principal.js';
import { NotFound } from '../../errors.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import type { DomainService } from '../domains/domains.js';
import type { ProxyConfig } from '../domains/proxy-config.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { workloadCommand } from '../../agents/outbound/kinds/workload-lifecycle.js';

type PreviewRecord = OutputOf<Contracts['previewDeployment']['one']>;

/**
 * Preview deployments of an application (one per open pull request). Webhooks create them;
 * the API reads and removes them. Access follows access to the application.
 */
export class PreviewService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly domains: DomainService,
    private readonly proxy: ProxyConfig,
    /** Where a preview's removal is queued (its Swarm service); none: only the records go. */
    private readonly outbox?: CommandOutbox,
  ) {}

  private get db() {
    return this.deps.db;
  }

  async all(p: Principal, applicationId: string) {
    await this.access.find(p, 'application', applicationId);
    const rows = await this.db
      .selectFrom('previewDeployments')
      .selectAll()
      .where('applicationId', '=', applicationId)
      .orderBy('createdAt', 'desc')
      .orderBy('id')
      .execute();
    return this.records(rows);
  }

  async one(p: Principal, previewDeploymentId: string) {
    const [record] = await this.records([await this.find(p, previewDeploymentId)]);
    return record!;
  }

  /**
   * Removes the record; its domains go with it (foreign key cascade), and so do their routes,
   * and its deployments. When it was ever deployed, the removal of its Swarm service is queued
   * in the same transaction, behind its deploys (one FIFO per workload: `application:<preview id>`).
   */
  async delete(p: Principal, previewDeploymentId: string) {
    const row = await this.find(p, previewDeploymentId);
    const [record] = await this.records([row]);
    await this.proxy.change(
      this.db,
      (tx) => this.proxy.serversRoutingTo(tx, { previewDeploymentId: row.id }),
      async (tx) => {
        const deployed = await tx.selectFrom('deployments').select('serverId').where('previewDeploymentId', '=', row.id).limit(1).executeTakeFirst();
        if (deployed && this.outbox) {
          const command = workloadCommand('remove', {
            commandId: this.deps.ids('cmd'),
            serverId: deployed.serverId,
            workload: { kind: 'application', id: row.id, appName: row.appName },
            createdAt: this.deps.clock(),
          });
          await this.outbox.queue(tx, command);
        }
        await tx.deleteFrom('previewDeployments').where('id', '=', row.id).execute();
      },
      { organizationId: p.organizationId },
    );
    this.outbox?.notify();
    return record!;
  }

  /** Every preview of an application (its deletion). */
  async deleteAll(p: Principal, applicationId: string) {
    const rows = await this.db.selectFrom('previewDeployments').select('id').where('applicationId', '=', applicationId).execute();
    for (const { id } of rows) await this.delete(p, id);
  }

  private async find(p: Principal, previewDeploymentId: string): Promise<PreviewDeployment> {
    const row = await this.db.selectFrom('previewDeployments').selectAll().where('id', '=', previewDeploymentId).executeTakeFirst();
    if (!row) throw NotFound('No such preview deployment');
    await this.access.through(p, 'application', row.applicationId, 'preview deployment');
    return row;
  }

  private async records(rows: PreviewDeployment[]): Promise<PreviewRecord[]> {
    const domains = await this.domains.ofPreviews(rows.map((r) => r.id));
    const deployments = new Map<string, Deployment[]>(rows.map((r) => [r.id, []]));
    if (rows.length > 0) {
      const all = await this.db
        .selectFrom('deployments')
        .selectAll()
        .where('previewDeploymentId', 'in', rows.map((r) => r.id))
        .orderBy('createdAt', 'desc')
        .orderBy('id', 'desc')
        .execute();
      for (const d of all) deployments.get(d.previewDeploymentId!)?.push(d);
    }
    return rows.map(({ id, createdAt, commentId: _comment, ...rest }) => ({
      previewDeploymentId: id,
      ...rest,
      domains: domains.get(id) ?? [],
      deployments: (deployments.get(id) ?? []).map((d) => deploymentRecord({ ...d, log: '' })),
      createdAt: iso(createdAt),
    }));
  }
}
