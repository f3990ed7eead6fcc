import type { RouterHandlers } from '../http/context.js';
import type { ComposeService } from '../services/compose/index.js';
import type { ComposeDeployments } from '../services/compose/index.js';
import type { ComposeFiles } from '../services/compose/index.js';
import type { DeploymentControl } from '../services/deployments/index.js';
import type { WorkloadLifecycle } from '../services/deployments/index.js';
import type { ComposeTemplateService } from '../services/compose/index.js';
import type { WebhookDeliveryReads } from '../services/webhooks/index.js';

/** The records of compose stacks, their deploys and lifecycle, and their files as deployed. */
export const composeHandlers = (
  stacks: ComposeService,
  deployments: ComposeDeployments,
  lifecycle: WorkloadLifecycle<'compose', ReturnType<ComposeService['record']>>,
  control: DeploymentControl,
  files: ComposeFiles,
): RouterHandlers<'compose'> => ({
  create: (input, { principal }) => stacks.create(principal, input),
  one: (input, { principal }) => stacks.one(principal, input.composeId),
  update: (input, { principal }) => stacks.update(principal, input),
  delete: async (input, { principal }) => ({
    ...(await lifecycle.delete(principal, input.composeId, { removeVolumes: input.deleteVolumes })),
    deleteVolumes: input.deleteVolumes ?? false,
  }),
  move: (input, { principal }) => stacks.move(principal, input.composeId, input.targetEnvironmentId),
  refreshToken: (input, { principal }) => stacks.refreshToken(principal, input.composeId),
  disconnectGitProvider: (input, { principal }) => stacks.disconnectGitProvider(principal, input.composeId),
  deploy: (input, { principal }) => deployments.deploy(principal, input, 'deploy'),
  redeploy: (input, { principal }) => deployments.deploy(principal, input, 'redeploy'),
  start: (input, { principal }) => lifecycle.start(principal, input.composeId),
  stop: (input, { principal }) => lifecycle.stop(principal, input.composeId),
  cancelDeployment: (input, { principal }) => control.cancelDeployment(principal, input.composeId),
  killBuild: (input, { principal }) => control.killBuild(principal, input.composeId),
  cleanQueues: (input, { principal }) => control.cleanQueues(principal, input.composeId),
  getConvertedCompose: (input, { principal }) => files.getConvertedCompose(principal, input.composeId),
  randomizeCompose: (input, { principal }) => files.randomizeCompose(principal, input.composeId),
  isolatedDeployment: (input, { principal }) => files.isolatedDeployment(principal, input.composeId),
  loadServices: (input, { principal }) => files.loadServices(principal, input.composeId, input.type),
  loadMountsByService: (input, { principal }) => files.loadMountsByService(principal, input.composeId, input.serviceName),
  getDefaultCommand: (input, { principal }) => files.getDefaultCommand(principal, input.composeId),
  fetchSourceType: (input, { principal }) => files.fetchSourceType(principal, input.composeId),
});

/** Template catalogs and templates turned into stacks (services/compose/compose-templates.ts). */
export const composeTemplateHandlers = (templates: ComposeTemplateService): RouterHandlers<'compose'> => ({
  templates: (input, { principal }) => templates.templates(principal, input),
  getTags: (input, { principal }) => templates.tags(principal, input),
  processTemplate: (input, { principal }) => templates.process(principal, input),
  import: (input, { principal }) => templates.import(principal, input),
  deployTemplate: (input, { principal }) => templates.deployTemplate(principal, input),
});

/** What the stack's webhooks received and decided (services/webhooks). */
export const composeWebhookHandlers = (webhooks: WebhookDeliveryReads): RouterHandlers<'compose'> => ({
  webhookDeliveries: (input, { principal }) => webhooks.of(principal, 'compose', input.composeId),
});
