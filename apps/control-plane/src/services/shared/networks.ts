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
  for (const [field, wanted] of networksNamed(f)) {
    const own = new Set(await stackNetworks(db, serverId, wanted, { organizationId: p.organizationId, own: true }));
    const bad = wanted.find((n) => !own.has(n));
    if (bad !== undefined) throw Invalid(field, notOurs(bad));
  }
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
  for (const [field, wanted] of networksNamed(row)) {
    const [foreign] = await stackNetworks(db, serverId, wanted, { organizationId, own: false });
    if (foreign !== undefined) throw Invalid(field, notOurs(foreign));
  }
}

/** The networks each field names besides the platform network (fields naming none left out). */
function networksNamed(values: { networkCluster?: unknown; networkIds?: unknown }): [string, string[]][] {
  const fields: [string, unknown[]][] = [
    ['networkIds', listOf(values.networkIds)],
    ['networkCluster', listOf(values.networkCluster).map((n) => (n as { Target?: unknown } | null)?.Target)],
  ];
  return fields
    .map(([field, names]): [string, string[]] => [
      field,
      [...new Set(names.filter((n): n is string => typeof n === 'string' && n !== PLATFORM_NETWORK))],
    ])
    .filter(([, names]) => names.length > 0);
}

/**
 * Of `names`, the appNames of compose stacks on the server that are the organization's isolated
 * ones (`own`), or any other organization's (`!own`).
 */
async function stackNetworks(
  db: Db,
  serverId: string | null,
  names: string[],
  of: { organizationId: string; own: boolean },
): Promise<string[]> {
  let q = db
    .selectFrom('composeStacks')
    .innerJoin('environments', 'environments.id', 'composeStacks.environmentId')
    .innerJoin('projects', 'projects.id', 'environments.projectId')
    .select('composeStacks.appName')
    .where('projects.organizationId', of.own ? '=' : '!=', of.organizationId)
    .where('composeStacks.appName', 'in', names);
  if (of.own) q = q.where('composeStacks.isolatedDeployment', '=', true);
  q = serverId === null ? q.where('composeStacks.serverId', 'is', null) : q.where('composeStacks.serverId', '=', serverId);
  return (await q.execute()).map((r) => r.appName);
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
