import type { Db } from '@skiff/db';
import { PLATFORM_NETWORK } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';

type Values = Record<string, unknown>;

const notOurs = (name: string) =>
  `${JSON.stringify(name)} is not a network of this organization on this server (only the platform network and the isolated networks of its compose stacks)`;

/**
 * The Docker networks a service of the caller's organization may join on its server, besides
 * the platform network it joins anyway (`networkCluster` of applications and caches, a cache's
 * `networkIds`):
 * - the platform network (`skiff-network`), shared by design;
 * - the isolated network of a compose stack of the caller's organization on the same server
 *   (`isolatedDeployment`: the network is named after the stack's appName, see
 *   libs/domain/src/compose/isolate.ts);
 * - a name no organization's stack has (a network the server's operator made by hand, a
 *   network id) only for a platform administrator;
 * - another organization's stack network never, not even for a platform administrator.
 * A refusal names the field and says the same whether the network exists elsewhere or not.
 */
export async function checkNetworks(db: Db, p: Principal, serverId: string | null, f: Values): Promise<void> {
  if (p.isPlatformAdmin) return assertNoForeignNetworks(db, p.organizationId, serverId, f);
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
      throw Invalid(field, notOurs(bad));
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

/**
 * At deploy: a saved network may since have become another organization's (the stack was
 * removed and its appName taken by another organization's stack), or was saved before the
 * rule above. A network named like a compose stack of another organization on the server is
 * refused (BAD_REQUEST naming the field, as an unknown network reads), whoever deploys.
 */
export async function assertNoForeignNetworks(
  db: Db,
  organizationId: string,
  serverId: string | null,
  row: { networkCluster?: unknown; networkIds?: unknown },
): Promise<void> {
  const fields: [string, string[]][] = [
    ['networkIds', listOf(row.networkIds).filter((n): n is string => typeof n === 'string')],
    ['networkCluster', listOf(row.networkCluster).map((n) => (n as { Target?: unknown } | null)?.Target).filter((n): n is string => typeof n === 'string')],
  ];
  for (const [field, names] of fields) {
    const wanted = [...new Set(names.filter((n) => n !== PLATFORM_NETWORK))];
    if (wanted.length === 0) continue;
    let q = db
      .selectFrom('composeStacks')
      .innerJoin('environments', 'environments.id', 'composeStacks.environmentId')
      .innerJoin('projects', 'projects.id', 'environments.projectId')
      .select('composeStacks.appName')
      .where('projects.organizationId', '!=', organizationId)
      .where('composeStacks.appName', 'in', wanted);
    q = serverId === null ? q.where('composeStacks.serverId', 'is', null) : q.where('composeStacks.serverId', '=', serverId);
    const foreign = await q.executeTakeFirst();
    if (foreign) {
      throw Invalid(field, notOurs(foreign.appName));
    }
  }
}

/** A stored jsonb list (a JSON text from drivers that do not parse it). */
function listOf(stored: unknown): unknown[] {
  if (typeof stored === 'string') {
    try {
      stored = JSON.parse(stored);
    } catch {
      return [];
    }
  }
  return Array.isArray(stored) ? stored : [];
}
