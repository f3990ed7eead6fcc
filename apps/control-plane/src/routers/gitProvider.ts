import type { RouterHandlers } from '../http/context.js';
import type { GitProviderService } from '../services/forges/index.js';

export const gitProviderHandlers = (forges: GitProviderService): RouterHandlers<'gitProvider'> => ({
  getAll: (_input, { principal }) => forges.all(principal),
  remove: (input, { principal }) => forges.remove(principal, input.gitProviderId),
});
