import type { ForgeHttpDeps } from './clients/index.js';
import { ForgeRepositories } from './forge-repositories.js';
import { GitProviderService } from './git-providers.js';
import type { IdentityService } from '../identity/identity.js';
import type { ServiceDeps } from '../shared/deps.js';

/** Forge connections (records) and what is read through them (repositories, branches, clone logins), for the composition root. */
export function buildForges(deps: ServiceDeps, identity: IdentityService, http: Partial<ForgeHttpDeps> = {}) {
  const providers = new GitProviderService(deps, identity);
  return { providers, reads: new ForgeRepositories(deps, providers, http) };
}
