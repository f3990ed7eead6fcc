import { z } from 'zod';
import { Role, Timestamp } from './primitives.js';

export const ServiceKind = z.enum(['application', 'compose', 'cache', 'database']);

export const ServiceSummary = z.object({
  id: z.string(),
  type: ServiceKind,
  name: z.string(),
  appName: z.string(),
  description: z.string().nullable(),
  applicationStatus: z.string(),
  serverId: z.string().nullable(),
  createdAt: Timestamp,
});

export const EnvironmentRecord = z.object({
  environmentId: z.string(),
  projectId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  env: z.string().describe('dotenv text shared by the services of this environment'),
  createdAt: Timestamp,
});

export const EnvironmentWithServices = EnvironmentRecord.extend({
  services: z.array(ServiceSummary),
});

export const ProjectRecord = z.object({
  projectId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  env: z.string().describe('dotenv text shared by every environment of this project'),
  createdAt: Timestamp,
});

export const ProjectWithEnvironments = ProjectRecord.extend({
  environments: z.array(EnvironmentWithServices),
});

export const RemovalSummary = z.object({
  environments: z.number(),
  applications: z.number(),
  compose: z.number(),
  caches: z.number(),
  databases: z.number().describe('database services (dbA..dbE)'),
  domains: z.number().describe('domains of the removed services and of their preview deployments'),
  backups: z.number().describe('backups whose target was one of the removed services'),
  archives: z.number().describe('uploaded archives of the removed applications, deleted from the control plane\'s disk'),
});

export const KeptAfterRemoval = z
  .array(
    z.object({
      kind: z.enum(['volume', 'composeVolumes', 'composeFiles']),
      name: z
        .string()
        .describe("a volume's name; a Compose project's name (its volumes are `<name>_<volume>`); a folder under the agent's data directory"),
      appName: z.string().describe('the removed service it belonged to'),
      serverId: z.string().nullable(),
      reason: z.string(),
    }),
  )
  .describe('what stays on the servers of the removed services, and why');

/** `deleteVolumes` of a removal that takes services with it (as `compose.delete` takes). */
export const DeleteVolumes = z
  .boolean()
  .optional()
  .describe("also remove the services' volumes (caches' data, compose stacks' named volumes and bind-mounted files); kept by default");

export const Permissions = z.object({
  accessedProjects: z.array(z.string()),
  accessedEnvironments: z.array(z.string()),
  accessedServices: z.array(z.string()),
  accessedGitProviders: z.array(z.string()),
  accessedServers: z.array(z.string()),
  canCreateProjects: z.boolean(),
  canCreateServices: z.boolean(),
  canDeleteProjects: z.boolean(),
  canDeleteServices: z.boolean(),
  canAccessToContainer: z.boolean(),
  canAccessToProxyFiles: z.boolean(),
  canAccessToAPI: z.boolean(),
  canAccessToSSHKeys: z.boolean(),
  canAccessToGitProviders: z.boolean(),
  canDeleteEnvironments: z.boolean(),
  canCreateEnvironments: z.boolean(),
});

export const OrganizationRecord = z.object({
  organizationId: z.string(),
  name: z.string(),
  logo: z.string().nullable(),
  defaultRole: z.string().nullable(),
  ownerId: z.string(),
  createdAt: Timestamp,
});

export const OrganizationWithRole = OrganizationRecord.extend({
  role: Role,
  isDefault: z.boolean(),
});

export const UserRecord = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  lastName: z.string().nullable(),
  image: z.string().nullable(),
  createdAt: Timestamp,
});

export const MemberRecord = UserRecord.extend({
  organizationId: z.string(),
  role: Role,
  permissions: Permissions,
});

/** What a key may do within its user's access (`user.createApiKey`'s `scope`). */
export const ApiKeyScope = z.strictObject({
  readOnly: z.boolean().optional().describe('only read operations (GET); every other answers FORBIDDEN'),
  projectIds: z
    .array(z.string().min(1))
    .min(1)
    .max(100)
    .optional()
    .describe('only these projects, their environments and services (and no other project, git provider or SSH key)'),
  serverIds: z
    .array(z.string().min(1))
    .min(1)
    .max(100)
    .optional()
    .describe('only these servers and the services that run on them'),
});

export const ApiKeyRecord = z.object({
  apiKeyId: z.string(),
  name: z.string(),
  start: z.string().describe('the first characters of the key, to recognise it'),
  organizationId: z.string(),
  createdAt: Timestamp,
  userId: z.string().optional().describe('whose key it is'),
  scope: z
    .object({ readOnly: z.boolean(), projectIds: z.array(z.string()).nullable(), serverIds: z.array(z.string()).nullable() })
    .nullable()
    .optional()
    .describe("null: the whole of the user's access"),
  expiresAt: Timestamp.nullable().optional().describe('null: never'),
  lastUsedAt: Timestamp.nullable().optional().describe('at most a minute behind the last use'),
});

export const NewApiKey = ApiKeyRecord.extend({
  key: z.string().describe('the key itself; shown only in this response'),
});

export const InvitationRecord = z.object({
  invitationId: z.string(),
  organizationId: z.string(),
  email: z.string(),
  role: Role,
  status: z.enum(['pending', 'accepted', 'canceled']),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});
