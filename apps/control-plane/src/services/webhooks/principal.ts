import { type Principal, defaultPermissions } from '../../authz/principal.js';

/**
 * Who a webhook's work acts as: the workload's organization, with an admin's reach, used
 * only for the workload the delivery was authenticated for.
 */
export function webhookPrincipal(organizationId: string): Principal {
  return { userId: 'webhook', organizationId, role: 'admin', apiKeyId: 'webhook', permissions: defaultPermissions(), isPlatformAdmin: false };
}
