import type { Db } from '@skiff/db';
import { hostCoveredBy, wireServerId } from '@skiff/domain';
import { Invalid } from '../../errors.js';

/**
 * Who a host belongs to on one server (null: the platform host). A server's proxy is shared by
 * every route on it, and matches exact hosts before wildcards and longer paths first, so a
 * host belongs to one owner there: one organization, or (on the platform host) the platform's
 * own domain. An owner's routes may take any paths of its hosts; nobody else may route the
 * host, a wildcard covering it, or a host its wildcard covers.
 */

/** Whether two route hosts can match the same request: equal, or one a `*.` wildcard covering the other. */
export function hostsOverlap(a: string, b: string): boolean {
  return a === b || hostCoveredBy(a, [b]) || hostCoveredBy(b, [a]);
}

/** The hosts that may overlap `host` (filtered by hostsOverlap after): itself, its parent's wildcard, or what its wildcard covers. */
function candidates(host: string): { exact: string[]; under: string | null } {
  if (host.startsWith('*.')) return { exact: [host], under: host.slice(1) }; // ".example.com"
  const dot = host.indexOf('.');
  return { exact: dot > 0 ? [host, `*${host.slice(dot)}`] : [host], under: null };
}

/**
 * Serializes the host checks of some servers: a transaction-scoped lock on each server's proxy
 * revision row (created when missing, in ProxyConfig's order), the rows ProxyConfig locks when it
 * queues their configuration, so two organizations cannot both claim a host by committing at once.
 */
export async function lockServerHosts(tx: Db, serverIds: (string | null)[]): Promise<void> {
  for (const wire of [...new Set(serverIds.map(wireServerId))].sort()) {
    await tx.insertInto('proxyRevisions').values({ serverId: wire, revision: 0 }).onConflict((oc) => oc.column('serverId').doNothing()).execute();
    await tx.selectFrom('proxyRevisions').select('revision').where('serverId', '=', wire).forUpdate().executeTakeFirst();
  }
}

/**
 * Refuses (BAD_REQUEST naming `field`) a route of `organizationId` for `host` on the server
 * when another organization routes an overlapping host there, or the host overlaps the
 * platform's own domain on the platform host. The message names neither the other
 * organization nor its hosts.
 */
export async function assertHostOwner(
  db: Db,
  serverId: string | null,
  organizationId: string,
  host: string,
  field = 'host',
  where = '',
): Promise<void> {
  const { exact, under } = candidates(host);
  let q = db
    .selectFrom('domains')
    .select('host')
    .where('organizationId', '!=', organizationId)
    .where((eb) => (under ? eb.or([eb('host', 'in', exact), eb('host', 'like', `%${under}`)]) : eb('host', 'in', exact)));
  q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
  const others = await q.execute();
  if (others.some((o) => hostsOverlap(o.host, host))) {
    throw Invalid(field, `${where}${host} is routed by another organization on this server (or overlaps a host it routes there)`);
  }
  if (serverId === null) {
    const platform = await db.selectFrom('platformSettings').select('host').where('id', '=', 'platform').executeTakeFirst();
    if (platform?.host && hostsOverlap(platform.host, host)) {
      throw Invalid(field, `${where}${host} is the platform's own domain (or overlaps it) on the platform host`);
    }
  }
}

/**
 * Refuses a platform domain (settings.assignDomainServer) for a host that a route of any
 * organization on the platform host has, or covers with a wildcard.
 */
export async function assertPlatformHostFree(db: Db, host: string): Promise<void> {
  const { exact } = candidates(host);
  const rows = await db.selectFrom('domains').select('host').where('serverId', 'is', null).where('host', 'in', exact).execute();
  if (rows.some((r) => hostsOverlap(r.host, host))) throw Invalid('host', `${host} already routes to a service on the platform host`);
}
