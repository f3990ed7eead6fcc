// Cache instances: records, their Swarm spec, deploys and lifecycle.
// What routers and the composition root use; services import each other's files directly.
export { CacheService } from './cache.js';
export { CacheLifecycle } from './cache-lifecycle.js';
export { cacheVolumeName } from './cache-spec.js';
