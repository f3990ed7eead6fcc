import type { RouterHandlers } from '../http/context.js';
import type { ApplicationLifecycle } from '../services/application-lifecycle.js';
import type { ApplicationService } from '../services/applications.js';
import type { DeploymentService } from '../services/deployments.js';

export const applicationHandlers = (
  apps: ApplicationService,
  deployments: DeploymentService,
  lifecycle: ApplicationLifecycle,
): RouterHandlers<'application'> => ({
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
  delete: (input, { principal }) => lifecycle.delete(principal, input.applicationId),
  stop: (input, { principal }) => lifecycle.stop(principal, input.applicationId),
  start: (input, { principal }) => lifecycle.start(principal, input.applicationId),
  reload: (input, { principal }) => lifecycle.reload(principal, input),
  deploy: (input, { principal }) => deployments.deploy(principal, input, 'deploy'),
  redeploy: (input, { principal }) => deployments.deploy(principal, input, 'redeploy'),
});
