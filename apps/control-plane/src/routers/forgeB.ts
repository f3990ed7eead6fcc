import type { RouterHandlers } from '../http/context.js';
import type { ForgeRepositories, GitProviderService } from '../services/forges/index.js';

export const forgeBHandlers = (forges: GitProviderService, reads: ForgeRepositories): RouterHandlers<'forgeB'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeB', input),
  one: (input, { principal }) => forges.one(principal, 'forgeB', input.forgeBId),
  forgeBProviders: (_input, { principal }) => forges.list(principal, 'forgeB'),
  getForgeBRepositories: (input, { principal }) => reads.repositories(principal, 'forgeB', input.forgeBId),
  getForgeBBranches: (input, { principal }) =>
    reads.branches(principal, 'forgeB', { forgeId: input.forgeBId, owner: input.owner, repo: input.repo, projectId: input.id }),
  testConnection: (input, { principal }) =>
    reads.testConnection(principal, 'forgeB', input.forgeBId, input.groupName !== undefined ? { config: { groupName: input.groupName } } : {}),
  update: (input, { principal }) => forges.update(principal, 'forgeB', input),
});
