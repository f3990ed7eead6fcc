import type { Principal } from '../../authz/principal.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import type { ServiceDeps } from './deps.js';
import { placeNewService } from './field-rules.js';
import type { ServiceAccess } from './service-access.js';

/** The columns every new service (application, compose stack, cache instance) starts with. */
export interface NewServiceColumns {
  id: string;
  environmentId: string;
  name: string;
  appName: string;
  description: string | null;
  serverId: string | null;
  /** Its own variables: none yet (sealed). */
  env: string;
}

export interface NewServiceInput {
  name: string;
  environmentId: string;
  appName?: string;
  description?: string | null;
  serverId?: string | null;
}

/**
 * The create of the three service kinds: placed (placeNewService), the app name checked by
 * the kind's own rule (`checkAppName`), its row written by `insert` from the shared columns
 * and its kind's own, and granted to its creator. Answers the row.
 */
export async function createService<Row>(
  parts: { deps: ServiceDeps; projects: ProjectService; access: ServiceAccess; identity: IdentityService },
  p: Principal,
  input: NewServiceInput,
  kind: { idPrefix: string; checkAppName?: (appName: string) => void; insert: (columns: NewServiceColumns) => Promise<Row> },
): Promise<Row> {
  const { serverId, appName } = await placeNewService(parts.projects, parts.access, p, input);
  kind.checkAppName?.(appName);
  const id = parts.deps.ids(kind.idPrefix);
  const row = await kind.insert({
    id,
    environmentId: input.environmentId,
    name: input.name,
    appName,
    description: input.description ?? null,
    serverId,
    env: parts.deps.secrets.seal(''),
  });
  await parts.identity.grantCreated(p, { services: [id] });
  return row;
}
