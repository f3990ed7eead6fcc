import type { RouterHandlers } from '../http/context.js';
import type { ProjectService } from '../services/projects/index.js';

export const environmentHandlers = (projects: ProjectService): RouterHandlers<'environment'> => ({
  create: (input, { principal }) => projects.createEnvironment(principal, input),
  one: (input, { principal }) => projects.environment(principal, input.environmentId),
  byProjectId: (input, { principal }) => projects.environmentsOf(principal, input.projectId),
  update: (input, { principal }) => projects.updateEnvironment(principal, input),
  remove: (input, { principal }) => projects.removeEnvironment(principal, input.environmentId, { deleteVolumes: input.deleteVolumes }),
  duplicate: (input, { principal }) => projects.duplicateEnvironment(principal, input),
});
