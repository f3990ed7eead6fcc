import type { RouterHandlers } from '../http/context.js';
import type { ForgeRepositories, GitProviderService } from '../services/forges/index.js';

export const forgeAHandlers = (forges: GitProviderService, reads: ForgeRepositories): RouterHandlers<'forgeA'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeA', input),
  one: (input, { principal }) => forges.one(principal, 'forgeA', input.forgeAId),
  forgeAProviders: (_input, { principal }) => forges.list(principal, 'forgeA'),
  getForgeARepositories: (input, { principal }) => reads.repositories(principal, 'forgeA', input.forgeAId),
  getForgeABranches: (input, { principal }) => reads.branches(principal, 'forgeA', { forgeId: input.forgeAId, owner: input.owner, repo: input.repo }),
  testConnection: (input, { principal }) => reads.testConnection(principal, 'forgeA', input.forgeAId),
  update: (input, { principal }) => forges.update(principal, 'forgeA', input),
});
