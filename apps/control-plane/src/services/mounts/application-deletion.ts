import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Principal } from '../../authz/principal.js';
import type { ApplicationService, PreviewService } from '../applications/index.js';
import type { WorkloadLifecycle } from '../deployments/index.js';
import type { MountService } from './mounts.js';

type DeletedApplication = OutputOf<Contracts['application']['delete']>;

/**
 * `application.delete` with `deleteVolumes`: the agent's removal takes the application's
 * labelled volumes only when asked; the answer names the volumes of its mounts that stay.
 * Its previews go first (PreviewService.delete: their services, domains and routes).
 */
export class ApplicationDeletion {
  constructor(
    private readonly lifecycle: WorkloadLifecycle<'application', ReturnType<ApplicationService['record']>>,
    private readonly mounts: MountService,
    /** Its previews, removed first (each its own service). */
    private readonly previews?: PreviewService,
  ) {}

  async delete(p: Principal, applicationId: string, deleteVolumes = false): Promise<DeletedApplication> {
    const volumes = await this.mounts.volumeNames(applicationId);
    await this.previews?.deleteAll(p, applicationId);
    const record = await this.lifecycle.delete(p, applicationId, { removeVolumes: deleteVolumes });
    return { ...record, deleteVolumes, keptVolumes: deleteVolumes ? [] : volumes };
  }
}
