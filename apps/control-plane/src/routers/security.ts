import type { RouterHandlers } from '../http/context.js';
import type { SecurityService } from '../services/domains/index.js';

export const securityHandlers = (security: SecurityService): RouterHandlers<'security'> => ({
  create: (input, { principal }) => security.create(principal, input),
  one: (input, { principal }) => security.one(principal, input.securityId),
  all: (input, { principal }) => security.all(principal, input.applicationId),
  update: (input, { principal }) => security.update(principal, input),
  delete: (input, { principal }) => security.delete(principal, input.securityId),
});
