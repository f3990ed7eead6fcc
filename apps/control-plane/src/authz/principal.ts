import type { ApiKeyScopeJson, PermissionsJson } from '@skiff/db';

export type Role = 'owner' | 'admin' | 'member';

/** Who is calling: the user behind an API key, acting in the key's organization. */
export interface Principal {
  userId: string;
  organizationId: string;
  role: Role;
  apiKeyId: string;
  permissions: PermissionsJson;
  isPlatformAdmin: boolean;
  /** The key's scope (policy.ts narrows the user's access with it); absent: the user's whole access. */
  scope?: ApiKeyScope | null;
  /** When the key stops working; absent or null: never. */
  expiresAt?: Date | null;
}

export type ApiKeyScope = ApiKeyScopeJson;

export const defaultPermissions = (): PermissionsJson => ({
  accessedProjects: [],
  accessedEnvironments: [],
  accessedServices: [],
  accessedGitProviders: [],
  accessedServers: [],
  canCreateProjects: false,
  canCreateServices: false,
  canDeleteProjects: false,
  canDeleteServices: false,
  canAccessToContainer: false,
  canAccessToProxyFiles: false,
  // Skiff is driven through its API: a member without it could do nothing at all.
  canAccessToAPI: true,
  canAccessToSSHKeys: false,
  canAccessToGitProviders: false,
  canDeleteEnvironments: false,
  canCreateEnvironments: false,
});

/** A member's stored permissions, with flags added since they were stored taking their defaults. */
export const storedPermissions = (json: unknown): PermissionsJson => ({
  ...defaultPermissions(),
  ...(json as Partial<PermissionsJson>),
});
