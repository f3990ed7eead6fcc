import type { RouterHandlers } from '../http/context.js';
import type { PreviewService } from '../services/applications/index.js';

export const previewDeploymentHandlers = (previews: PreviewService): RouterHandlers<'previewDeployment'> => ({
  all: (input, { principal }) => previews.all(principal, input.applicationId),
  one: (input, { principal }) => previews.one(principal, input.previewDeploymentId),
  delete: (input, { principal }) => previews.delete(principal, input.previewDeploymentId),
});
