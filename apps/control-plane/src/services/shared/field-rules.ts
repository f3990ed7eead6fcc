import type { ForgeKind } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { appNameFrom, refuseGitBranch, refuseGitUrl } from '@skiff/domain';
import { Invalid } from '../../errors.js';
import { asReference } from './organization-records.js';
import type { ProjectService } from '../projects/projects.js';
import type { ServiceAccess } from './service-access.js';

/**
 * Rules on service settings that applications, compose stacks and cache instances share,
 * beyond the shapes their contracts check. Each takes the fields given (`undefined`: not
 * given, nothing to check) and throws `Invalid` naming the failing field.
 */
export type Fields = Record<string, unknown>;

export const FORGES: readonly ForgeKind[] = ['forgeA', 'forgeB', 'forgeC', 'forgeD'];

/** An integer from `min` to `max`, when given and not null. */
export function checkInteger(f: Fields, field: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  const v = f[field];
  if (v === undefined || v === null) return;
  if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) {
    throw Invalid(field, `must be an integer from ${min} to ${max}`);
  }
}

/** Replica counts a Swarm service takes. */
export const checkReplicas = (f: Fields) => checkInteger(f, 'replicas', 0, 1000);

/** Memory in bytes and CPU in nano-CPUs, as Swarm's resource limits and reservations take them. */
export function checkResources(f: Fields): void {
  for (const field of ['memoryReservation', 'memoryLimit']) {
    const v = f[field];
    if (typeof v === 'string' && !/^\d+$/.test(v)) throw Invalid(field, 'must be a number of bytes');
  }
  for (const field of ['cpuReservation', 'cpuLimit']) {
    const v = f[field];
    if (typeof v === 'string' && !/^\d+$/.test(v)) throw Invalid(field, 'must be a number of nano-CPUs (1000000000 = 1 CPU)');
  }
}

/**
 * A plain git source: the URL (http(s), ssh, git, or scp-like `git@host:path`; no options,
 * remote helpers or link-local/metadata hosts) and the branch (a ref name git cannot take
 * for an option), as the agent checks them again before cloning (@skiff/domain git-remote).
 */
export function checkGitSource(f: Fields): void {
  const urlRefusal = typeof f.customGitUrl === 'string' ? refuseGitUrl(f.customGitUrl) : null;
  if (urlRefusal) throw Invalid('customGitUrl', urlRefusal);
  const branchRefusal = typeof f.customGitBranch === 'string' ? refuseGitBranch(f.customGitBranch) : null;
  if (branchRefusal) throw Invalid('customGitBranch', branchRefusal);
}

/** Paths inside a checked-out source: no `..` segment may leave it. */
export function checkInsideSource(f: Fields, fields: readonly string[]): void {
  for (const field of fields) {
    const v = f[field];
    if (typeof v === 'string' && v.split(/[\\/]/).includes('..')) throw Invalid(field, 'must stay inside the source (no ..)');
  }
}

/** The records a source setting names: the SSH key of a plain git URL and the forge connections. */
export async function checkSourceReferences(access: ServiceAccess, p: Principal, f: Fields): Promise<void> {
  await access.checkSshKey(p, f.customGitSSHKeyId as string | null | undefined);
  for (const kind of FORGES) await access.checkForge(p, kind, f[`${kind}Id`] as string | null | undefined);
}

/**
 * The environment a service moves to: one of the caller's organization that they may see.
 * Another organization's (or a missing) environment is bad input naming `field`.
 */
export function moveTarget(projects: ProjectService, p: Principal, environmentId: string, field: string) {
  return asReference(field, 'no such environment', () => projects.findEnvironment(p, environmentId));
}

/**
 * Where a new service goes: an environment the caller may see, a server of their organization
 * (null: the platform host) and an app name free on that server (drawn from the name if none).
 */
export async function placeNewService(
  projects: ProjectService,
  access: ServiceAccess,
  p: Principal,
  input: { name: string; environmentId: string; appName?: string; serverId?: string | null },
): Promise<{ serverId: string | null; appName: string }> {
  await projects.findEnvironment(p, input.environmentId);
  const serverId = input.serverId ?? null;
  await access.checkServer(p, serverId);
  const appName = input.appName ?? appNameFrom(input.name);
  await access.assertAppNameFree(serverId, appName);
  return { serverId, appName };
}
