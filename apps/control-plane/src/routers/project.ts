import type { RouterHandlers } from '../http/context.js';
import type { ProjectService } from '../services/projects/index.js';

export const projectHandlers = (projects: ProjectService): RouterHandlers<'project'> => ({
  create: (input, { principal }) => projects.create(principal, input),
  one: (input, { principal }) => projects.one(principal, input.projectId),
  all: (_input, { principal }) => projects.all(principal),
  update: (input, { principal }) => projects.update(principal, input),
  remove: (input, { principal }) => projects.remove(principal, input.projectId, { deleteVolumes: input.deleteVolumes }),
  duplicate: (input, { principal }) => projects.duplicate(principal, input),
});
