import type { RouterHandlers } from '../http/context.js';
import type { DeploymentService } from '../services/deployments/index.js';

export const deploymentHandlers = (deployments: DeploymentService): RouterHandlers<'deployment'> => ({
  all: (input, { principal }) => deployments.all(principal, 'application', input.applicationId),
  allByCompose: (input, { principal }) => deployments.all(principal, 'compose', input.composeId),
  readLogs: (input, { principal }) => deployments.readLogs(principal, input.deploymentId),
  rollback: (input, { principal }) => deployments.rollback(principal, input.deploymentId),
});
