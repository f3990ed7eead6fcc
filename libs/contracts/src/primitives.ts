import { z } from 'zod';

/** `S>=1`: a string of at least one character. */
export const NonEmpty = z.string().min(1);

/**
 * Any JSON value. Recursive, so it is registered by name: the OpenAPI document then describes
 * it once, as the component `JsonValue`, rather than as a definition local to each operation.
 */
export const JsonValue = z.json().register(z.globalRegistry, { id: 'JsonValue' });

/** An identifier field marked `S` in the spec (no length rule of its own). */
export const Id = z.string();
/** How many of a backup's newest runs retention keeps: at least 1, at most what the column holds (a 32-bit integer). */
export const KeepLatestCount = z.number().int().min(1).max(2_147_483_647);
/** An identifier field marked `S>=1`. */
export const RequiredId = z.string().min(1);

/**
 * The appName rule is libs/domain's (app-name.ts: `APP_NAME`, `APP_NAME_MAX`,
 * `APP_NAME_MESSAGE`). This package depends on zod only, so it repeats them here;
 * tools/app-name.spec.ts fails when the two differ.
 */
export const APP_NAME_PATTERN = /^[a-zA-Z0-9._-]+$/;
export const AppName = z.string().min(1).max(63).regex(APP_NAME_PATTERN, 'only letters, digits, dot, underscore and hyphen');

export const Branch = z
  .string()
  .min(1)
  .regex(/^[a-zA-Z0-9._\-/#]+$/, 'only letters, digits, dot, underscore, hyphen, slash and hash');

export const ContainerRef = z
  .string()
  .min(1)
  .regex(/^[a-zA-Z0-9._-]+$/, 'only letters, digits, dot, hyphen and underscore');

export const Email = z.email();
export const Uri = z.url({ protocol: /^https?$/ });

export const Status = z.enum(['idle', 'running', 'done', 'error']);
/** The git forges by the names the API gives them. */
export const FORGE_NAMES = 'forgeA GitHub, forgeB GitLab, forgeC Bitbucket, forgeD Gitea or Forgejo';

export const SourceType = z
  .enum(['forgeA', 'container', 'git', 'forgeB', 'forgeC', 'forgeD', 'drop'])
  .describe(`Where an application comes from: git (any git URL), a forge connection (${FORGE_NAMES}), container (a registry image), drop (an uploaded archive)`);
export const ComposeSourceType = z
  .enum(['git', 'forgeA', 'forgeB', 'forgeC', 'forgeD', 'raw'])
  .describe(`Where a compose file comes from: git (any git URL), a forge connection (${FORGE_NAMES}), raw (the text stored on the stack)`);
export const ComposeType = z.enum(['container-compose', 'stack']);
export const BuildType = z
  .enum(['containerfile', 'legacy_buildpacks', 'cloudnative_buildpacks', 'pack_one', 'static', 'pack_two'])
  .describe(
    'How an application is built: containerfile (a Dockerfile), legacy_buildpacks (Heroku buildpacks via `pack`), ' +
      'cloudnative_buildpacks (Paketo buildpacks via `pack`), pack_one (Nixpacks), pack_two (Railpack), static (a ' +
      "directory served by the proxy's file server)",
  );
export const CertificateType = z
  .enum(['acme', 'none', 'custom'])
  .describe('acme (issued automatically by the proxy), custom (a stored certificate), none');
/** The database engines by the names the API gives them. */
export const DATABASE_NAMES = 'dbA PostgreSQL, dbB MariaDB, dbC MySQL, dbD MongoDB, dbE libSQL';
export const BackupDatabaseType = z
  .enum(['dbA', 'dbB', 'dbC', 'dbD', 'web-server', 'dbE'])
  .describe(`What is backed up: a database (${DATABASE_NAMES}) or web-server (the platform itself)`);
export const BackupType = z.enum(['database', 'compose']);
export const TriggerType = z.enum(['push', 'tag']);
export const BillingTier = z.enum(['legacy', 'hobby', 'startup']);
export const Role = z.enum(['owner', 'admin', 'member']);

/** An ISO-8601 timestamp as it appears on the wire. */
export const Timestamp = z.string().describe('ISO-8601 timestamp');

/** The answer of an operation that has nothing to return. */
export const Empty = z.object({});

/** The result of an operation whose record shape is not specified yet. */
export const Unspecified = z
  .looseObject({})
  .describe('Result shape not specified yet; it is documented when the operation is implemented.');

/**
 * A resource amount the spec types as text (memory in bytes, CPUs in nano-CPUs): a number
 * sent as such is refused with how to send it, not a bare "expected string".
 */
export const ResourceAmount = z
  .string({ error: (issue) => (typeof issue.input === 'number' ? `send the amount as text, e.g. "${issue.input}"` : undefined) })
  .nullable()
  .optional();
