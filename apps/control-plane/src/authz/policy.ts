import type { Access, Grant, Method } from '@skiff/contracts';
import { Forbidden, NotFound } from '../errors.js';
import type { Principal, Role } from './principal.js';

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

/**
 * A key limited to named projects or servers (its `scope`). It narrows what the user may do:
 * records outside its lists are not visible, and it acts with the member role at most (what
 * needs admin concerns the whole organization, which such a key does not reach).
 */
export const isLimited = (p: Principal) => Boolean(p.scope && (p.scope.projectIds || p.scope.serverIds));

/** The user's role in the organization, whatever the key. */
const holdsAdminRole = (p: Principal) => rank[p.role] >= rank.admin;

/** Acts as an owner or admin: the role, through a key not limited to named records. */
export const isAdmin = (p: Principal) => holdsAdminRole(p) && !isLimited(p);

export function hasRole(p: Principal, role: Role): boolean {
  return rank[isLimited(p) ? 'member' : p.role] >= rank[role];
}

/** Grants that reach records a limited key does not name (other projects, git providers, SSH keys). */
function outsideScope(p: Principal, grant: Grant): boolean {
  if (!isLimited(p)) return false;
  if (grant === 'canAccessToGitProviders' || grant === 'canAccessToSSHKeys') return true;
  return grant === 'canCreateProjects' && p.scope!.projectIds !== null;
}

/** Owners and admins hold every grant; members hold what `user.assignPermissions` gave them; a limited key none beyond its lists. */
export function hasGrant(p: Principal, grant: Grant): boolean {
  if (outsideScope(p, grant)) return false;
  return holdsAdminRole(p) || p.permissions[grant] === true;
}

const scopeNote = (p: Principal) => (isLimited(p) ? ' (this API key is limited to named projects or servers)' : '');

/** The gate every operation passes before its handler: key usable, scope, role and grant held. */
export function checkAccess(p: Principal, access: Access, method: Method = 'POST'): void {
  if (!holdsAdminRole(p) && !p.permissions.canAccessToAPI) {
    throw Forbidden('API access is disabled for this member');
  }
  if (p.scope?.readOnly && method !== 'GET') throw Forbidden('This API key is read-only (scope readOnly): it may only call read operations');
  if (access.role && !hasRole(p, access.role)) throw Forbidden(`Requires the ${access.role} role${scopeNote(p)}`);
  if (access.grant && !hasGrant(p, access.grant)) throw Forbidden(`Requires the ${access.grant} permission${scopeNote(p)}`);
}

export function requireGrant(p: Principal, grant: Grant): void {
  if (!hasGrant(p, grant)) throw Forbidden(`Requires the ${grant} permission${scopeNote(p)}`);
}

/** What serves every organization on the platform host (its settings, its proxy) is for platform administrators only. */
export function requirePlatformAdmin(p: Principal, why: string): void {
  if (!p.isPlatformAdmin) throw Forbidden(why);
}

/**
 * Resource rules: a record of another organization does not exist for the caller
 * (NOT_FOUND, with the message an unknown id gets: `No such <what>`, so the two cannot be
 * told apart); one of the caller's organization that a member was not given, or that the
 * key's scope does not name, is FORBIDDEN.
 */
export function assertOrganization(p: Principal, organizationId: string, what: string): void {
  if (organizationId !== p.organizationId) throw NotFound(`No such ${what}`);
}

const inScope = (ids: string[] | null | undefined, id: string) => !ids || ids.includes(id);

export const canSeeProject = (p: Principal, projectId: string) =>
  inScope(p.scope?.projectIds, projectId) && (holdsAdminRole(p) || p.permissions.accessedProjects.includes(projectId));

export const canSeeEnvironment = (p: Principal, projectId: string, environmentId: string) =>
  canSeeProject(p, projectId) && (holdsAdminRole(p) || p.permissions.accessedEnvironments.includes(environmentId));

/** A server record of the caller's organization: granted to a member, and named by a key limited to servers. */
export const canSeeServer = (p: Principal, serverId: string) =>
  inScope(p.scope?.serverIds, serverId) && (holdsAdminRole(p) || p.permissions.accessedServers.includes(serverId));

/**
 * A service (application, compose stack, cache) of `projectId`, running on `serverId` (null:
 * the platform host, which a key limited to servers does not name).
 */
export const canSeeService = (p: Principal, service: { id: string; serverId: string | null }, projectId: string) =>
  inScope(p.scope?.projectIds, projectId) &&
  (!p.scope?.serverIds || (service.serverId !== null && p.scope.serverIds.includes(service.serverId))) &&
  (holdsAdminRole(p) || p.permissions.accessedServices.includes(service.id));

/** The servers a caller may see, for list filters; null: all of the organization's. */
export function visibleServers(p: Principal): string[] | null {
  const scoped = p.scope?.serverIds ?? null;
  if (holdsAdminRole(p)) return scoped;
  return scoped ? p.permissions.accessedServers.filter((id) => scoped.includes(id)) : p.permissions.accessedServers;
}

export function assertProject(p: Principal, project: { id: string; organizationId: string }): void {
  assertOrganization(p, project.organizationId, 'project');
  if (!canSeeProject(p, project.id)) throw Forbidden('No access to this project');
}

export function assertEnvironment(
  p: Principal,
  project: { id: string; organizationId: string },
  environmentId: string,
): void {
  assertOrganization(p, project.organizationId, 'environment');
  if (!canSeeEnvironment(p, project.id, environmentId)) {
    throw Forbidden('No access to this environment');
  }
}

/**
 * An event (services/events): one of a workload as its service is seen (canSeeService); one
 * of the whole organization (a restart, a threshold alert, no workload) by admins and owners
 * through a key not limited to named records.
 */
export const canSeeEvent = (p: Principal, e: { organizationId: string; workloadId: string | null; projectId: string | null; serverId: string | null }) =>
  e.organizationId === p.organizationId &&
  (e.workloadId !== null && e.projectId !== null ? canSeeService(p, { id: e.workloadId, serverId: e.serverId }, e.projectId) : isAdmin(p));
