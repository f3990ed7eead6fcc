import { z } from 'zod';
import { SECRET_KEY, parseDotenv } from '../dotenv.js';
import { fieldsOf } from '../fields.js';
import { op } from '../workloads.js';

/** A dotenv text as the file holds it: values by name, null where the value is a secret kept on the platform. */
const EnvMap = z.record(z.string(), z.string().nullable());

const Domain = z
  .object({
    host: z.string().min(1),
    path: z.string().optional(),
    port: z.number().int().nullable().optional(),
    https: z.boolean().optional(),
    certificateType: z.string().optional(),
    customEntrypoint: z.string().nullable().optional(),
    customCertResolver: z.string().nullable().optional(),
    serviceName: z.string().nullable().optional(),
    internalPath: z.string().nullable().optional(),
    stripPath: z.boolean().optional(),
    middlewares: z.array(z.string()).nullable().optional(),
    forwardAuthEnabled: z.boolean().optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const DOMAIN_FIELDS = Object.keys(Domain.shape) as Array<keyof z.infer<typeof Domain>>;

/** Settings that are secrets: never in the file (export leaves them out, apply refuses them). */
export const SECRET_SETTING = /password|secret|token/i;

/** The dotenv-text fields of a workload: in the file as name → value maps, secret-looking values as null. */
export const ENV_FIELDS = ['env', 'previewEnv', 'buildArgs', 'previewBuildArgs'] as const;
export type EnvField = (typeof ENV_FIELDS)[number];

const Settings = z.record(z.string(), z.unknown()).superRefine((settings, ctx) => {
  for (const key of Object.keys(settings)) {
    if (SECRET_SETTING.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'a secret is never in the file: set it with its update operation (a cache or database password is generated when absent)' });
  }
});

const Workload = z
  .object({
    name: z.string().min(1),
    appName: z.string().optional(),
    description: z.string().nullable().optional(),
    settings: Settings.optional(),
    env: EnvMap.optional(),
    previewEnv: EnvMap.optional(),
    buildArgs: EnvMap.optional(),
    previewBuildArgs: EnvMap.optional(),
    domains: z.array(Domain).optional(),
  })
  .strict();

/** The database routers (dbA..dbE), each with the engine its records name. */
export const DATABASE_ROUTERS = Object.fromEntries(
  (['dbA', 'dbB', 'dbC', 'dbD', 'dbE'] as const).map((r) => [r, ((op(`${r}.one`).output as z.ZodObject).shape.engine as z.ZodLiteral<string>).value]),
) as Record<'dbA' | 'dbB' | 'dbC' | 'dbD' | 'dbE', string>;
const ENGINES = Object.values(DATABASE_ROUTERS) as [string, ...string[]];

const Service = Workload.omit({ domains: true, previewEnv: true, buildArgs: true, previewBuildArgs: true });

const Environment = z
  .object({
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    env: EnvMap.optional(),
    applications: z.array(Workload).optional(),
    compose: z.array(Workload).optional(),
    caches: z.array(Service.strict()).optional(),
    databases: z.array(Service.extend({ engine: z.enum(ENGINES) }).strict()).optional(),
  })
  .strict();

/** The file `skiff export` writes and `skiff apply` reads. */
export const ProjectFile = z
  .object({
    skiff: z.literal(1),
    project: z.object({ name: z.string().min(1), description: z.string().nullable().optional(), env: EnvMap.optional() }).strict(),
    environments: z.array(Environment).default([]),
  })
  .strict();

export type ProjectFile = z.infer<typeof ProjectFile>;
export type WorkloadEntry = z.infer<typeof Workload>;
export type DomainEntry = z.infer<typeof Domain>;

export interface KindSpec {
  type: 'application' | 'compose' | 'cache' | 'database';
  /** The list of an environment that holds this kind in the file. */
  list: 'applications' | 'compose' | 'caches' | 'databases';
  id: string;
  one: string;
  create: string;
  update: string;
  domains: string | null;
  /** Databases: the engine of this router. */
  engine?: string;
  /** Record fields its update operation refuses whatever their value (replicaSet: MongoDB only). */
  notSettings?: string[];
}

/** The workload kinds the file holds, the operations that read and write them, and where; each database router is a kind. */
export const KINDS = {
  applications: { type: 'application', list: 'applications', id: 'applicationId', one: 'application.one', create: 'application.create', update: 'application.update', domains: 'domain.byApplicationId' },
  compose: { type: 'compose', list: 'compose', id: 'composeId', one: 'compose.one', create: 'compose.create', update: 'compose.update', domains: 'domain.byComposeId' },
  caches: { type: 'cache', list: 'caches', id: 'cacheId', one: 'cache.one', create: 'cache.create', update: 'cache.update', domains: null },
  ...(Object.fromEntries(
    Object.entries(DATABASE_ROUTERS).map(([r, engine]) => [r, { type: 'database', list: 'databases', id: `${r}Id`, one: `${r}.one`, create: `${r}.create`, update: `${r}.update`, domains: null, engine, notSettings: engine === 'mongo' ? [] : ['replicaSet'] }]),
  ) as Record<keyof typeof DATABASE_ROUTERS, KindSpec>),
} satisfies Record<string, KindSpec> as Record<'applications' | 'compose' | 'caches' | keyof typeof DATABASE_ROUTERS, KindSpec>;
export type KindKey = keyof typeof KINDS;
export const KIND_KEYS = Object.keys(KINDS) as KindKey[];

/** The env-like fields a kind takes (those of ENV_FIELDS its update operation has). */
export function envFields(kind: KindKey): EnvField[] {
  const names = new Set(fieldsOf(op(KINDS[kind].update).input).map((f) => f.name));
  return ENV_FIELDS.filter((f) => names.has(f));
}

/** Never in the file: ids and states of this platform, the env texts (kept apart), and anything secret. */
const NOT_SETTINGS = /^(name|appName|description|environmentId|serverId|applicationStatus|createdAt|env|previewEnv|buildArgs|previewBuildArgs|refreshToken)$|password|secret|token/i;

/** The settings of a kind that the file carries: what its update operation takes and its record shows. */
export function settingNames(kind: KindKey, record: Record<string, unknown>): string[] {
  const spec = KINDS[kind];
  return fieldsOf(op(spec.update).input)
    .map((f) => f.name)
    .filter((n) => n !== spec.id && !NOT_SETTINGS.test(n) && !SECRET_SETTING.test(n) && !spec.notSettings?.includes(n) && Object.hasOwn(record, n));
}

/** A dotenv text for the file: secret-looking names keep their name, not their value. */
export function envForFile(text: string | null | undefined): Record<string, string | null> | undefined {
  const vars = parseDotenv(text ?? '');
  if (!vars.size) return undefined;
  return Object.fromEntries([...vars].map(([k, v]) => [k, SECRET_KEY.test(k) ? null : v]));
}

/**
 * The dotenv text after applying the file's values to the current one: listed names take
 * their value (null keeps the current one), names the file does not list stay as they are.
 * Answers the text and the names the file leaves alone or could not fill.
 */
export function mergedEnv(current: string, wanted: Record<string, string | null>): { text: string; kept: string[]; unset: string[] } {
  const lines = current ? current.split(/\r?\n/) : [];
  const seen = new Set<string>();
  const out = lines.map((line) => {
    const eq = line.indexOf('=');
    const key = eq > 0 && !line.trimStart().startsWith('#') ? line.slice(0, eq).replace(/^\s*export\s+/, '').trim() : null;
    if (key === null || !Object.hasOwn(wanted, key)) return line;
    seen.add(key);
    const value = wanted[key];
    return value === null || value === undefined ? line : `${key}=${value}`;
  });
  const unset: string[] = [];
  for (const [key, value] of Object.entries(wanted)) {
    if (seen.has(key)) continue;
    if (value === null) unset.push(key);
    else out.push(`${key}=${value}`);
  }
  const kept = [...parseDotenv(current).keys()].filter((k) => !Object.hasOwn(wanted, k));
  return { text: out.join('\n'), kept, unset };
}
