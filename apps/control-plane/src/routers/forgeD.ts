import type { RouterHandlers } from '../http/context.js';
import type { GitProviderService } from '../services/forges/index.js';

export const forgeDHandlers = (forges: GitProviderService): RouterHandlers<'forgeD'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeD', input),
  one: (input, { principal }) => forges.one(principal, 'forgeD', input.forgeDId),
  forgeDProviders: (_input, { principal }) => forges.list(principal, 'forgeD'),
  update: (input, { principal }) => forges.update(principal, 'forgeD', input),
});
