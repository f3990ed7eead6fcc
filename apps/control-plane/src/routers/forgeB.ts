import type { RouterHandlers } from '../http/context.js';
import type { GitProviderService } from '../services/forges/index.js';

export const forgeBHandlers = (forges: GitProviderService): RouterHandlers<'forgeB'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeB', input),
  one: (input, { principal }) => forges.one(principal, 'forgeB', input.forgeBId),
  forgeBProviders: (_input, { principal }) => forges.list(principal, 'forgeB'),
  update: (input, { principal }) => forges.update(principal, 'forgeB', input),
});
