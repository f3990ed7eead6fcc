import type { RouterHandlers } from '../http/context.js';
import type { ForgeRepositories, GitProviderService } from '../services/forges/index.js';

export const forgeDHandlers = (forges: GitProviderService, reads: ForgeRepositories): RouterHandlers<'forgeD'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeD', input),
  one: (input, { principal }) => forges.one(principal, 'forgeD', input.forgeDId),
  forgeDProviders: (_input, { principal }) => forges.list(principal, 'forgeD'),
  getForgeDRepositories: (input, { principal }) => reads.repositories(principal, 'forgeD', input.forgeDId),
  getForgeDBranches: (input, { principal }) => reads.branches(principal, 'forgeD', { forgeId: input.forgeDId, owner: input.owner, repo: input.repo }),
  testConnection: (input, { principal }) => reads.testConnection(principal, 'forgeD', input.forgeDId),
  update: (input, { principal }) => forges.update(principal, 'forgeD', input),
});
