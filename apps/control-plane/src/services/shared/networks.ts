import type { Db } from '@skiff/db';
import { PLATFORM_NETWORK } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';

type Values = Record<string, unknown>;

/**
 * The Docker networks a service of the caller's organization may join on its server, besides
 * the platform network it joins anyway (`networkCluster` of applications and caches, a cache's
 * `networkIds`):
 * - the platform network (`skiff-network`), shared by design;
 * - the isolated network of a compose stack of the caller's organization on the same server
 *   (`isolatedDeployment`: the network is named after the stack's appName, see
 *   libs/domain/src/compose/isolate.ts);
 * - anything else (another organization's isolated network, a network the server's operator
 *   made by hand, a network id) only for a platform administrator.
 * A refusal names the field and says the same whether the network exists elsewhere or not.
 */
export async function checkNetworks(db: Db, p: Principal, serverId: string | null, f: Values): Promise<void> {
  if (p.isPlatformAdmin) return;
  const fields: [string, string[]][] = [];
  if (Array.isArray(f.networkIds)) fields.push(['networkIds', (f.networkIds as unknown[]).filter((n): n is string => typeof n === 'string')]);
  if (Array.isArray(f.networkCluster)) {
    const targets = (f.networkCluster as { Target?: unknown }[]).map((n) => n?.Target).filter((n): n is string => typeof n === 'string');
    fields.push(['networkCluster', targets]);
  }
  for (const [field, names] of fields) {
    const wanted = [...new Set(names.filter((n) => n !== PLATFORM_NETWORK))];
    if (wanted.length === 0) continue;
    const own = new Set(await ownNetworks(db, p.organizationId, serverId, wanted));
    const bad = wanted.find((n) => !own.has(n));
    if (bad !== undefined) {
      throw Invalid(field, `${JSON.stringify(bad)} is not a network of this organization on this server (only the platform network and the isolated networks of its compose stacks)`);
    }
  }
}

/** Of `names`, those that are the isolated network of a compose stack of the organization on the server. */
async function ownNetworks(db: Db, organizationId: string, serverId: string | null, names: string[]): Promise<string[]> {
  let q = db
    .selectFrom('composeStacks')
    .innerJoin('environments', 'environments.id', 'composeStacks.environmentId')
    .innerJoin('projects', 'projects.id', 'environments.projectId')
    .select('composeStacks.appName')
    .where('projects.organizationId', '=', organizationId)
    .where('composeStacks.isolatedDeployment', '=', true)
    .where('composeStacks.appName', 'in', names);
  q = serverId === null ? q.where('composeStacks.serverId', 'is', null) : q.where('composeStacks.serverId', '=', serverId);
  return (await q.execute()).map((r) => r.appName);
}
