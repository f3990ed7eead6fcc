import type { GitProvider } from '@skiff/db';
import type { ForgeHttpDeps } from './clients/index.js';
import { ForgeRepositories } from './forge-repositories.js';
import { GitProviderService } from './git-providers.js';
import type { IdentityService } from '../identity/identity.js';
import type { ServiceDeps } from '../shared/deps.js';

/** Forge connections (records) and what is read through them (repositories, branches, clone logins), for the composition root. */
export function buildForges(deps: ServiceDeps, identity: IdentityService, http: Partial<ForgeHttpDeps> = {}) {
  const providers = new GitProviderService(deps, identity);
  const reads = new ForgeRepositories(deps, providers, http);
  // API tokens of the connections whose credential is minted or refreshed (comments and statuses on pull requests).
  const tokens = { forgeA: (row: GitProvider) => reads.client(row).apiToken(), forgeB: (row: GitProvider) => reads.client(row).apiToken() };
  return { providers, reads, tokens };
}
