import type { Db } from '@skiff/db';
import { ComposeError, describeHostPrivilege, type HostPrivilege, hostPrivileges } from '@skiff/domain';
import { Invalid } from '../../errors.js';

/**
 * Refuses, as BAD_REQUEST naming `field`, a compose file that reaches into its host
 * (`privileged`, host namespaces, host paths, the Docker socket…: libs/domain
 * compose/host-privileges.ts) on a server shared by organizations, unless a platform
 * administrator trusts the organization there (settings.trustOrganization).
 *
 * The shared server is the platform host (`serverId` null), where every organization deploys.
 * A remote server belongs to one organization (`servers.organization_id`): it is that
 * organization's own machine, so its stacks may use the host there.
 *
 * A file that does not parse is left to the checks that read it (deploy refuses it).
 */
export async function assertNoHostPrivileges(db: Db, organizationId: string, serverId: string | null, composeText: string, field = 'composeFile') {
  if (serverId !== null || composeText.trim() === '') return;
  const found = privilegesOf(composeText);
  if (found.length === 0 || (await mayUseHostPrivileges(db, organizationId, serverId))) return;
  throw Invalid(field, describeHostPrivilege(found[0]));
}

/**
 * Whether the organization's stacks may use host privileges on the server: on a remote server
 * (its own machine) always, on the platform host when a platform administrator trusts it. Sent
 * to the agent in DeployCompose (`allow_host_privileges`), which checks a git source's file.
 */
export async function mayUseHostPrivileges(db: Db, organizationId: string, serverId: string | null): Promise<boolean> {
  if (serverId !== null) return true;
  const org = await db.selectFrom('organizations').select('trustedOnPlatformHost').where('id', '=', organizationId).executeTakeFirst();
  return org?.trustedOnPlatformHost === true;
}

function privilegesOf(composeText: string): HostPrivilege[] {
  try {
    return hostPrivileges(composeText);
  } catch (err) {
    if (err instanceof ComposeError) return [];
    throw err;
  }
}
