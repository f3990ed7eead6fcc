import type { RouterHandlers } from '../http/context.js';
import type { GitProviderService } from '../services/forges/index.js';

export const forgeAHandlers = (forges: GitProviderService): RouterHandlers<'forgeA'> => ({
  create: (input, { principal }) => forges.create(principal, 'forgeA', input),
  one: (input, { principal }) => forges.one(principal, 'forgeA', input.forgeAId),
  forgeAProviders: (_input, { principal }) => forges.list(principal, 'forgeA'),
  update: (input, { principal }) => forges.update(principal, 'forgeA', input),
});
