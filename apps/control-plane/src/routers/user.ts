import type { RouterHandlers } from '../http/context.js';
import type { IdentityService } from '../services/identity/index.js';
import type { MetricsTokenService } from '../services/identity/index.js';
import type { OrganizationService } from '../services/identity/index.js';

export const userHandlers = (
  identity: IdentityService,
  orgs: OrganizationService,
  metrics: MetricsTokenService,
): RouterHandlers<'user'> => ({
  get: async (_input, { principal }) => identity.get(principal),
  one: (input, { principal }) => identity.one(principal, input.userId),
  all: (_input, { principal }) => identity.all(principal),
  update: (input, { principal }) => identity.update(principal, input),
  remove: (input, { principal }) => identity.remove(principal, input.userId),
  assignPermissions: (input, { principal }) => identity.assignPermissions(principal, input),
  haveRootAccess: async (_input, { principal }) => identity.haveRootAccess(principal),
  checkUserOrganizations: (input, { principal }) => identity.checkUserOrganizations(principal, input.userId),
  createApiKey: (input, { principal }) =>
    identity.createApiKey(principal, input.name, input.metadata?.organizationId),
  generateToken: (_input, { principal }) =>
    identity.createApiKey(principal, `token ${new Date().toISOString().slice(0, 19)}`),
  deleteApiKey: (input, { principal }) => identity.deleteApiKey(principal, input.apiKeyId),
  getUserByToken: (input) => orgs.byToken(input.token),
  getInvitations: (_input, { principal }) => orgs.invitationsFor(principal),
  getMetricsToken: (_input, { principal }) => metrics.tokenOf(principal),
});
