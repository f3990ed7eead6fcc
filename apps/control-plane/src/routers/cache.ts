import type { RouterHandlers } from '../http/context.js';
import type { CacheLifecycle } from '../services/caches/index.js';
import type { CacheService } from '../services/caches/index.js';

export const cacheHandlers = (caches: CacheService, lifecycle: CacheLifecycle): RouterHandlers<'cache'> => ({
  create: (input, { principal }) => caches.create(principal, input),
  one: (input, { principal }) => caches.one(principal, input.cacheId),
  update: (input, { principal }) => caches.update(principal, input),
  saveEnvironment: (input, { principal }) => caches.saveEnvironment(principal, input),
  saveExternalPort: (input, { principal }) => lifecycle.saveExternalPort(principal, input),
  changeStatus: (input, { principal }) => caches.changeStatus(principal, input),
  move: (input, { principal }) => caches.move(principal, input.cacheId, input.targetEnvironmentId),
  remove: (input, { principal }) => lifecycle.remove(principal, input.cacheId),
  deploy: (input, { principal }) => lifecycle.deploy(principal, input.cacheId),
  rebuild: (input, { principal }) => lifecycle.rebuild(principal, input.cacheId),
  start: (input, { principal }) => lifecycle.start(principal, input.cacheId),
  stop: (input, { principal }) => lifecycle.stop(principal, input.cacheId),
  reload: (input, { principal }) => lifecycle.reload(principal, input),
});
