import type { RouterHandlers } from '../http/context.js';
import type { ApplicationService } from '../services/applications/index.js';
import type { DeploymentControl } from '../services/deployments/index.js';
import type { DeploymentService } from '../services/deployments/index.js';
import type { DropArchiveService } from '../services/deployments/index.js';
import type { WorkloadLifecycle } from '../services/deployments/index.js';
import type { ApplicationDeletion } from '../services/mounts/index.js';
import type { WebhookDeliveryReads } from '../services/webhooks/index.js';

export const applicationHandlers = (
  apps: ApplicationService,
  deployments: DeploymentService,
  lifecycle: WorkloadLifecycle<'application', ReturnType<ApplicationService['record']>>,
  drops: DropArchiveService,
  control: DeploymentControl,
  deletion: ApplicationDeletion,
  webhooks: WebhookDeliveryReads,
): RouterHandlers<'application'> => ({
  refreshToken: (input, { principal }) => apps.refreshToken(principal, input.applicationId),
  webhookDeliveries: (input, { principal }) => webhooks.of(principal, 'application', input.applicationId),
  create: (input, { principal }) => apps.create(principal, input),
  one: (input, { principal }) => apps.one(principal, input.applicationId),
  update: (input, { principal }) => apps.update(principal, input),
  saveEnvironment: (input, { principal }) => apps.update(principal, input),
  saveBuildType: (input, { principal }) => apps.update(principal, input),
  saveForgeAProvider: (input, { principal }) => apps.saveSource(principal, 'forgeA', input),
  saveForgeBProvider: (input, { principal }) => apps.saveSource(principal, 'forgeB', input),
  saveForgeCProvider: (input, { principal }) => apps.saveSource(principal, 'forgeC', input),
  saveForgeDProvider: (input, { principal }) => apps.saveSource(principal, 'forgeD', input),
  saveContainerProvider: (input, { principal }) => apps.saveSource(principal, 'container', input),
  saveGitProvider: (input, { principal }) => apps.saveSource(principal, 'git', input),
  disconnectGitProvider: (input, { principal }) => apps.disconnectGitProvider(principal, input.applicationId),
  markRunning: (input, { principal }) => apps.markRunning(principal, input.applicationId),
  delete: (input, { principal }) => deletion.delete(principal, input.applicationId, input.deleteVolumes),
  stop: (input, { principal }) => lifecycle.stop(principal, input.applicationId),
  start: (input, { principal }) => lifecycle.start(principal, input.applicationId),
  reload: (input, { principal }) => lifecycle.reload(principal, input.applicationId, input.appName),
  deploy: (input, { principal }) => deployments.deploy(principal, input, 'deploy'),
  redeploy: (input, { principal }) => deployments.deploy(principal, input, 'redeploy'),
  cancelDeployment: (input, { principal }) => control.cancelDeployment(principal, input.applicationId),
  killBuild: (input, { principal }) => control.killBuild(principal, input.applicationId),
  cleanQueues: (input, { principal }) => control.cleanQueues(principal, input.applicationId),
  // The mount hands over the file only with a multipart body (it refuses the call without one).
  dropDeployment: (input, { principal, upload }) => drops.upload(principal, input, upload!),
});
