import type { RouterHandlers } from '../http/context.js';
import type { OrganizationService } from '../services/identity/index.js';

export const organizationHandlers = (orgs: OrganizationService): RouterHandlers<'organization'> => ({
  create: (input, { principal }) => orgs.create(principal, input),
  all: (_input, { principal }) => orgs.all(principal),
  one: (input, { principal }) => orgs.one(principal, input.organizationId),
  update: (input, { principal }) => orgs.update(principal, input),
  delete: (input, { principal }) => orgs.delete(principal, input.organizationId),
  setDefault: (input, { principal }) => orgs.setDefault(principal, input.organizationId),
  allInvitations: (_input, { principal }) => orgs.allInvitations(principal),
  removeInvitation: (input, { principal }) => orgs.removeInvitation(principal, input.invitationId),
  inviteMember: (input, { principal }) => orgs.invite(principal, input),
  // Authenticated by the token; an API key, when the request presents one, names the accepting account.
  acceptInvitation: (input, { principal }) => orgs.accept(input.token, input.name, principal ?? null),
});
