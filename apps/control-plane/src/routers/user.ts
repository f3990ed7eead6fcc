import type { RouterHandlers } from '../http/context.js';
import type { ApiKeyService, IdentityService } from '../services/identity/index.js';
import type { MetricsTokenService } from '../services/identity/index.js';
import type { InvitationMailer, OrganizationService } from '../services/identity/index.js';

export const userHandlers = (
  identity: IdentityService,
  orgs: OrganizationService,
  metrics: MetricsTokenService,
  keys: ApiKeyService,
  invitations: InvitationMailer,
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
    keys.create(principal, { name: input.name, organizationId: input.metadata?.organizationId, expiresAt: input.expiresAt, scope: input.scope }),
  generateToken: (_input, { principal }) => keys.create(principal, { name: `token ${new Date().toISOString().slice(0, 19)}` }),
  deleteApiKey: (input, { principal }) => keys.delete(principal, input.apiKeyId),
  apiKeys: (_input, { principal }) => keys.list(principal),
  getUserByToken: (input) => orgs.byToken(input.token),
  getInvitations: (_input, { principal }) => orgs.invitationsFor(principal),
  getMetricsToken: (_input, { principal }) => metrics.tokenOf(principal),
  sendInvitation: (input, { principal }) => invitations.send(principal, input.invitationId, input.notificationId),
});
