import type { Database, Db, Environment, ForgeKind, Project } from '@skiff/db';
import type { Selectable } from 'kysely';
import type { Principal } from '../../authz/principal.js';
import { assertOrganization, canSeeServer, canSeeService, isAdmin, requireGrant } from '../../authz/policy.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';
import { ENVIRONMENT_COLUMNS, PROJECT_COLUMNS, SERVICE_COLUMNS } from './columns.js';
import { compiledOnce } from './compiled-once.js';
import { asReference } from './organization-records.js';
import { type ServiceKind, serviceTables } from './service-records.js';

type RowOf<K extends ServiceKind> = Selectable<Database[(typeof serviceTables)[K]['table']]>;

export interface Located<K extends ServiceKind> {
  row: RowOf<K>;
  environment: Environment;
  project: Project;
}

/** The environment's and the project's columns beside the service's, under these prefixes (no service column starts so). */
const IN_ENVIRONMENT = 'inEnvironment';
const IN_PROJECT = 'inProject';
const prefixed = (prefix: string, column: string) => `${prefix}${column[0]!.toUpperCase()}${column.slice(1)}`;
const unprefixed = (prefix: string, key: string) => `${key[prefix.length]!.toLowerCase()}${key.slice(prefix.length + 1)}`;

const locate = Object.fromEntries(
  (Object.keys(serviceTables) as ServiceKind[]).map((kind) => [
    kind,
    compiledOnce(['id'], (db: Db, slot) =>
      db
        .selectFrom(`${serviceTables[kind].table as 'applications'} as s`)
        .innerJoin('environments as e', 'e.id', 's.environmentId')
        .innerJoin('projects as p', 'p.id', 'e.projectId')
        .select(SERVICE_COLUMNS[kind].map((c) => `s.${c}` as 's.id'))
        .select(ENVIRONMENT_COLUMNS.map((c) => `e.${c} as ${prefixed(IN_ENVIRONMENT, c)}` as 'e.id'))
        .select(PROJECT_COLUMNS.map((c) => `p.${c} as ${prefixed(IN_PROJECT, c)}` as 'p.id'))
        .where('s.id', '=', slot.id),
    ),
  ]),
) as unknown as Record<ServiceKind, (db: Db, values: { id: unknown }) => Promise<Record<string, unknown>[]>>;

/** A row of `locate` as the service's row, its environment and its project. */
function split(located: Record<string, unknown>) {
  const row: Record<string, unknown> = {};
  const environment: Record<string, unknown> = {};
  const project: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(located)) {
    if (key.startsWith(IN_ENVIRONMENT)) environment[unprefixed(IN_ENVIRONMENT, key)] = value;
    else if (key.startsWith(IN_PROJECT)) project[unprefixed(IN_PROJECT, key)] = value;
    else row[key] = value;
  }
  return { row, environment, project };
}

const KIND_NAMES: Record<ServiceKind, string> = { application: 'application', compose: 'compose stack', cache: 'cache instance', database: 'database service' };

/**
 * Finds services and the records they reference, with the organization and permission rules
 * every router shares: another organization's record is NOT_FOUND; one of the caller's
 * organization that a member was not granted is FORBIDDEN.
 */
export class ServiceAccess {
  constructor(private readonly db: Db) {}

  /** The service with its environment and project: one statement, compiled once for each kind. */
  async find<K extends ServiceKind>(p: Principal, kind: K, id: string): Promise<Located<K>> {
    const [located] = await locate[kind](this.db, { id });
    if (!located) throw NotFound(`No such ${KIND_NAMES[kind]}`);
    const { row, environment, project } = split(located) as Located<K>;
    assertOrganization(p, project.organizationId, KIND_NAMES[kind]);
    if (!canSeeService(p, row as { id: string; serverId: string | null }, project.id)) throw Forbidden(`No access to this ${KIND_NAMES[kind]}`);
    return { row, environment, project };
  }

  /**
   * The service a record of its own hangs from (a deployment, a preview, a security entry),
   * found with `find`'s rules: another organization's answers as an unknown id of that record
   * would (`No such <what>`), so the two cannot be told apart.
   */
  async through<K extends ServiceKind>(p: Principal, kind: K, id: string, what: string): Promise<Located<K>> {
    try {
      return await this.find(p, kind, id);
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') throw NotFound(`No such ${what}`);
      throw err;
    }
  }

  /** The same as `find`, for a reference in another record's input: failures name the field. */
  reference<K extends ServiceKind>(p: Principal, kind: K, id: string, field: string): Promise<Located<K>> {
    return asReference(field, `no such ${KIND_NAMES[kind]}`, () => this.find(p, kind, id));
  }

  /** App names are Docker service names: unique on a server across every kind of service. */
  async assertAppNameFree(serverId: string | null, appName: string, exceptId?: string): Promise<void> {
    for (const { table } of Object.values(serviceTables)) {
      let q = this.db.selectFrom(table).select('id').where('appName', '=', appName);
      q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
      if (exceptId) q = q.where('id', '!=', exceptId);
      if (await q.executeTakeFirst()) throw Invalid('appName', `${appName} is already used on this server`);
    }
  }

  /** A `serverId` given in input: a server of the caller's organization that they may use. */
  async checkServer(p: Principal, serverId: string | null | undefined, field = 'serverId'): Promise<void> {
    if (serverId === null || serverId === undefined) return;
    const server = await this.db.selectFrom('servers').select(['id', 'organizationId']).where('id', '=', serverId).executeTakeFirst();
    if (!server || server.organizationId !== p.organizationId) throw Invalid(field, 'no such server');
    if (!canSeeServer(p, serverId)) throw Forbidden('No access to this server');
  }

  async checkSshKey(p: Principal, sshKeyId: string | null | undefined, field = 'customGitSSHKeyId'): Promise<void> {
    if (sshKeyId === null || sshKeyId === undefined) return;
    const key = await this.db.selectFrom('sshKeys').select('organizationId').where('id', '=', sshKeyId).executeTakeFirst();
    if (!key || key.organizationId !== p.organizationId) throw Invalid(field, 'no such SSH key');
  }

  /** A forge connection referenced by a service: of that kind, in the organization, granted. */
  async checkForge(p: Principal, kind: ForgeKind, forgeId: string | null | undefined, field = `${kind}Id`): Promise<void> {
    if (forgeId === null || forgeId === undefined) return;
    const forge = await this.db
      .selectFrom('gitProviders')
      .select(['organizationId', 'kind', 'gitProviderId'])
      .where('id', '=', forgeId)
      .executeTakeFirst();
    if (!forge || forge.organizationId !== p.organizationId || forge.kind !== kind) throw Invalid(field, `no such ${kind} connection`);
    if (!isAdmin(p)) {
      requireGrant(p, 'canAccessToGitProviders');
      if (!p.permissions.accessedGitProviders.includes(forge.gitProviderId)) throw Forbidden('No access to this git provider');
    }
  }
}
