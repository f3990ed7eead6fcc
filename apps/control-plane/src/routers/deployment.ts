import type { RouterHandlers } from '../http/context.js';
import type { DeploymentService } from '../services/deployments.js';

export const deploymentHandlers = (deployments: DeploymentService): RouterHandlers<'deployment'> => ({
  all: (input, { principal }) => deployments.all(principal, input.applicationId),
  readLogs: (input, { principal }) => deployments.readLogs(principal, input.deploymentId),
});
