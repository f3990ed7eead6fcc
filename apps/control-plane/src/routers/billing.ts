import type { RouterHandlers } from '../http/context.js';
import type { BillingService } from '../services/settings/index.js';

export const billingHandlers = (billing: BillingService): RouterHandlers<'billing'> => ({
  getProducts: () => billing.getProducts(),
  canCreateMoreServers: (_input, { principal }) => billing.canCreateMoreServers(principal),
  createCheckoutSession: (input, { principal }) => billing.createCheckoutSession(principal, input),
  createCustomerPortalSession: (_input, { principal }) => billing.createCustomerPortalSession(principal),
});
