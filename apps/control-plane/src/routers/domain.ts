import type { RouterHandlers } from '../http/context.js';
import type { DomainService } from '../services/domains/index.js';

export const domainHandlers = (domains: DomainService): RouterHandlers<'domain'> => ({
  create: (input, { principal }) => domains.create(principal, input),
  byApplicationId: (input, { principal }) => domains.byApplicationId(principal, input.applicationId),
  byComposeId: (input, { principal }) => domains.byComposeId(principal, input.composeId),
  one: (input, { principal }) => domains.one(principal, input.domainId),
  update: (input, { principal }) => domains.update(principal, input),
  delete: (input, { principal }) => domains.delete(principal, input.domainId),
  generateDomain: (input, { principal }) => domains.generateDomain(principal, input),
  canGenerateProxyMeDomains: (input, { principal }) => domains.canGenerateProxyMeDomains(principal, input.serverId),
  validateDomain: (input, { principal }) => domains.validateDomain(principal, input),
});
