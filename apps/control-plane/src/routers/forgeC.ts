import type { RouterHandlers } from '../http/context.js';
import type { GitProviderService } from '../services/forges/index.js';

export const forgeCHandlers = (forges: GitProviderService): RouterHandlers<'forgeC'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeC', input),
  one: (input, { principal }) => forges.one(principal, 'forgeC', input.forgeCId),
  forgeCProviders: (_input, { principal }) => forges.list(principal, 'forgeC'),
  update: (input, { principal }) => forges.update(principal, 'forgeC', input),
});
