import { LOCAL_SERVER_ID } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { assertOrganization, isAdmin, requirePlatformAdmin } from '../../authz/policy.js';
import { Forbidden, NotFound } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';

/**
 * Who may act on a whole host (cleanups, monitoring data, restarts, updates): on the platform
 * host (no `serverId`, or `local`) a platform administrator; on another server an admin of the
 * organization owning it (a server of another organization does not exist for the caller).
 * Answers the server's id on the agent channel.
 */
export async function assertHostAuthority(db: ServiceDeps['db'], p: Principal, serverId: string | undefined): Promise<string> {
  if (serverId === undefined || serverId === LOCAL_SERVER_ID) {
    requirePlatformAdmin(p, 'The platform host serves every organization: only a platform administrator may act on it as a whole');
    return LOCAL_SERVER_ID;
  }
  const server = await db.selectFrom('servers').select(['id', 'organizationId']).where('id', '=', serverId).executeTakeFirst();
  if (!server) throw NotFound('No such server');
  assertOrganization(p, server.organizationId, 'server');
  if (!isAdmin(p)) throw Forbidden("Acting on a whole server needs an admin of its organization, through a key not limited to named records");
  return server.id;
}
