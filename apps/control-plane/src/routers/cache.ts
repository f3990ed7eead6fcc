import type { RouterHandlers } from '../http/context.js';
import type { CacheService } from '../services/cache.js';

/**
 * The record operations of cache instances. deploy, start, stop, reload and rebuild need the
 * agent: until then they have no handler and answer NOT_IMPLEMENTED.
 */
export const cacheHandlers = (caches: CacheService): RouterHandlers<'cache'> => ({
  create: (input, { principal }) => caches.create(principal, input),
  one: (input, { principal }) => caches.one(principal, input.cacheId),
  update: (input, { principal }) => caches.update(principal, input),
  saveEnvironment: (input, { principal }) => caches.saveEnvironment(principal, input),
  saveExternalPort: (input, { principal }) => caches.saveExternalPort(principal, input),
  changeStatus: (input, { principal }) => caches.changeStatus(principal, input),
  move: (input, { principal }) => caches.move(principal, input.cacheId, input.targetEnvironmentId),
  remove: (input, { principal }) => caches.remove(principal, input.cacheId),
});
