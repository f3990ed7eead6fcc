import type { Access, Grant } from '@skiff/contracts';
import { Forbidden, NotFound } from '../errors.js';
import type { Principal, Role } from './principal.js';

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

export const isAdmin = (p: Principal) => rank[p.role] >= rank.admin;

export function hasRole(p: Principal, role: Role): boolean {
  return rank[p.role] >= rank[role];
}

/** Owners and admins hold every grant; members hold what `user.assignPermissions` gave them. */
export function hasGrant(p: Principal, grant: Grant): boolean {
  return isAdmin(p) || p.permissions[grant] === true;
}

/** The gate every operation passes before its handler: key usable, role and grant held. */
export function checkAccess(p: Principal, access: Access): void {
  if (!isAdmin(p) && !p.permissions.canAccessToAPI) {
    throw Forbidden('API access is disabled for this member');
  }
  if (access.role && !hasRole(p, access.role)) throw Forbidden(`Requires the ${access.role} role`);
  if (access.grant && !hasGrant(p, access.grant)) throw Forbidden(`Requires the ${access.grant} permission`);
}

export function requireGrant(p: Principal, grant: Grant): void {
  if (!hasGrant(p, grant)) throw Forbidden(`Requires the ${grant} permission`);
}

/** What serves every organization on the platform host (its settings, its proxy) is for platform administrators only. */
export function requirePlatformAdmin(p: Principal, why: string): void {
  if (!p.isPlatformAdmin) throw Forbidden(why);
}

/**
 * Resource rules: a record of another organization does not exist for the caller
 * (NOT_FOUND, with the message an unknown id gets: `No such <what>`, so the two cannot be
 * told apart); one of the caller's organization that a member was not given is FORBIDDEN.
 */
export function assertOrganization(p: Principal, organizationId: string, what: string): void {
  if (organizationId !== p.organizationId) throw NotFound(`No such ${what}`);
}

export const canSeeProject = (p: Principal, projectId: string) =>
  isAdmin(p) || p.permissions.accessedProjects.includes(projectId);

export const canSeeEnvironment = (p: Principal, projectId: string, environmentId: string) =>
  isAdmin(p) ||
  (p.permissions.accessedProjects.includes(projectId) &&
    p.permissions.accessedEnvironments.includes(environmentId));

export const canSeeService = (p: Principal, serviceId: string) =>
  isAdmin(p) || p.permissions.accessedServices.includes(serviceId);

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
