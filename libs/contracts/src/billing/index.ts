import { defineRouter } from '../contract.js';
import { canCreateMoreServers } from './canCreateMoreServers.js';
import { createCheckoutSession } from './createCheckoutSession.js';
import { createCustomerPortalSession } from './createCustomerPortalSession.js';
import { getProducts } from './getProducts.js';

export const billing = defineRouter('billing', {
  getProducts,
  createCheckoutSession,
  createCustomerPortalSession,
  canCreateMoreServers,
});
