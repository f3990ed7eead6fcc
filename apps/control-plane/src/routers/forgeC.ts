import type { RouterHandlers } from '../http/context.js';
import type { ForgeRepositories, GitProviderService } from '../services/forges/index.js';

/** Only the fields given: the stored ones stand in for the others. */
const given = (values: Record<string, unknown>) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));

export const forgeCHandlers = (forges: GitProviderService, reads: ForgeRepositories): RouterHandlers<'forgeC'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeC', input),
  one: (input, { principal }) => forges.one(principal, 'forgeC', input.forgeCId),
  forgeCProviders: (_input, { principal }) => forges.list(principal, 'forgeC'),
  getForgeCRepositories: (input, { principal }) => reads.repositories(principal, 'forgeC', input.forgeCId),
  getForgeCBranches: (input, { principal }) => reads.branches(principal, 'forgeC', { forgeId: input.forgeCId, owner: input.owner, repo: input.repo }),
  testConnection: (input, { principal }) =>
    reads.testConnection(principal, 'forgeC', input.forgeCId, {
      config: given({ forgeCUsername: input.forgeCUsername, forgeCEmail: input.forgeCEmail, forgeCWorkspaceName: input.workspaceName }),
      secrets: given({ apiToken: input.apiToken, appPassword: input.appPassword }),
    }),
  update: (input, { principal }) => forges.update(principal, 'forgeC', input),
});
