// Database services (dbA..dbE): records, engines, their Swarm spec, deploys and lifecycle.
export { DatabaseServices } from './database.js';
export { DatabaseLifecycle } from './database-lifecycle.js';
export { databaseVolumeName } from './database-spec.js';
export { ENGINES, ENGINE_OF_ROUTER } from './engines.js';
