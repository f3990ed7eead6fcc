// What the capabilities share: injected dependencies, access checks, field rules, record codecs, service records.
// What routers and the composition root use; services import each other's files directly.
export { type ServiceDeps } from './deps.js';
export { ServiceAccess } from './service-access.js';
export { type WorkloadRemovals } from './service-records.js';
