// Git providers (the four forges and plain git).
// What routers and the composition root use; services import each other's files directly.
export { GitProviderService } from './git-providers.js';
export { ForgeRepositories } from './forge-repositories.js';
export { forgeClient, ForgeError, type ForgeClient } from './clients/index.js';
export { buildForges } from './wiring.js';
