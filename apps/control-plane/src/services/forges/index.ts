// Git providers (the four forges and plain git).
// What routers and the composition root use; services import each other's files directly.
export { GitProviderService } from './git-providers.js';
