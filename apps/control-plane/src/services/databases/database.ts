import { randomBytes } from 'node:crypto';
import type { DatabaseEngine, DatabaseService as DatabaseRow } from '@skiff/db';
import { isImageReference } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import { type ServiceDeps, isUniqueViolation } from '../shared/deps.js';
import { checkInteger, checkReplicas, checkResources, moveTarget } from '../shared/field-rules.js';
import { checkNetworks } from '../shared/networks.js';
import { assertHostPortsFree, hostPortsOf } from '../shared/published-ports.js';
import { createService } from '../shared/new-service.js';
import { RecordCodec } from '../shared/record-codec.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import { connectionUrls } from './database-spec.js';
import { type Credentials, ENGINES } from './engines.js';

const CLUSTER = [
  'healthCheckCluster', 'restartPolicyCluster', 'placementCluster', 'updateConfigCluster',
  'rollbackConfigCluster', 'modeCluster', 'labelsCluster', 'networkCluster',
  'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster',
] as const;

/** The default database and user names. */
export const DEFAULT_NAME = 'app';
const NETWORK_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

type Values = Record<string, unknown>;
export type DatabaseRecord = Record<string, unknown>;

/** A generated password: 24 URL-safe characters (144 bits). */
export const generatePassword = () => randomBytes(18).toString('base64url');

const portTaken = (err: unknown) => {
  const e = err as { constraint?: string; detail?: string };
  return e.constraint === 'database_services_server_external_port' || (e.detail ?? '').includes('external_port');
};

export interface CreateDatabaseInput {
  name: string;
  appName?: string;
  environmentId: string;
  serverId?: string | null;
  description?: string | null;
  containerImage?: string;
  databaseName?: string;
  databaseUser?: string;
  databasePassword?: string;
  rootPassword?: string;
  replicaSet?: boolean;
}

/**
 * Database service records (dbA..dbE: PostgreSQL, MariaDB, MySQL, MongoDB, libSQL): image,
 * credentials (write-only), resources and Swarm settings; changes apply at the next deploy
 * (database-lifecycle.ts runs them). Each router sees only its engine's services: another
 * engine's id is NOT_FOUND there.
 */
export class DatabaseServices {
  private readonly codecs: Record<DatabaseEngine, RecordCodec<DatabaseRecord>>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly identity: IdentityService,
    private readonly options: { publicIp?: string } = {},
  ) {
    const codec = (engine: DatabaseEngine) =>
      new RecordCodec<DatabaseRecord>(deps.secrets, {
        idField: `${ENGINES[engine].router}Id`,
        blankWhenNull: ['env'],
        sealed: ['env'],
        writeOnly: ['databasePassword', 'rootPassword'],
        json: ['args', 'networkIds', ...CLUSTER],
        hidden: ['deployCount'],
      });
    this.codecs = { postgres: codec('postgres'), mariadb: codec('mariadb'), mysql: codec('mysql'), mongo: codec('mongo'), libsql: codec('libsql') };
  }

  private get db() {
    return this.deps.db;
  }

  /** The service of that engine, with the shared organization and permission rules. */
  async locate(p: Principal, engine: DatabaseEngine, id: string): Promise<Located<'database'>> {
    const located = await this.access.find(p, 'database', id);
    if (located.row.engine !== engine) throw NotFound(`No such ${ENGINES[engine].label} service`);
    return located;
  }

  /** The record as responses show it: credentials hidden, connection strings added. */
  async record(row: DatabaseRow): Promise<DatabaseRecord> {
    return { ...this.codecs[row.engine].record(row), ...connectionUrls(row, await this.externalHost(row.serverId)) };
  }

  /** The opened credentials of a service (for its deploy). */
  credentials(row: DatabaseRow): Credentials {
    return {
      databaseName: row.databaseName,
      databaseUser: row.databaseUser,
      password: this.deps.secrets.open(row.databasePassword),
      rootPassword: row.rootPassword === null ? null : this.deps.secrets.open(row.rootPassword),
    };
  }

  private async externalHost(serverId: string | null): Promise<string | null> {
    if (serverId === null) return this.options.publicIp ?? null;
    const server = await this.db.selectFrom('servers').select('address').where('id', '=', serverId).executeTakeFirst();
    return server?.address ?? null;
  }

  async create(p: Principal, engine: DatabaseEngine, input: CreateDatabaseInput) {
    const spec = ENGINES[engine];
    checkEngineFields(engine, input as unknown as Values);
    const fields = {
      containerImage: input.containerImage ?? spec.defaultImage,
      databaseName: spec.takesDatabaseName ? (input.databaseName ?? DEFAULT_NAME) : null,
      databaseUser: input.databaseUser ?? DEFAULT_NAME,
      databasePassword: input.databasePassword ?? generatePassword(),
      rootPassword: spec.takesRootPassword ? (input.rootPassword ?? generatePassword()) : null,
      replicaSet: input.replicaSet ?? false,
    };
    checkFields(engine, fields);
    const row = await createService({ deps: this.deps, projects: this.projects, access: this.access, identity: this.identity }, p, input, {
      idPrefix: 'dbs',
      insert: (columns) =>
        this.write(() =>
          this.db
            .insertInto('databaseServices')
            .values({
              ...columns,
              ...fields,
              engine,
              databasePassword: this.deps.secrets.seal(fields.databasePassword),
              rootPassword: fields.rootPassword === null ? null : this.deps.secrets.seal(fields.rootPassword),
              detachPlatformNetwork: false,
            })
            .returningAll()
            .executeTakeFirstOrThrow(),
        ),
    });
    return this.record(row);
  }

  private async write(run: () => Promise<DatabaseRow>): Promise<DatabaseRow> {
    try {
      return await run();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw portTaken(err) ? Invalid('externalPort', 'already published on this server') : Invalid('appName', 'already used on this server');
      }
      throw err;
    }
  }

  async one(p: Principal, engine: DatabaseEngine, id: string) {
    const { row } = await this.locate(p, engine, id);
    return this.record(row);
  }

  /** `update` and the `save*`/`changeStatus` operations: changes the fields given, after checking them all. */
  async update(p: Principal, engine: DatabaseEngine, id: string, input: Values) {
    const { createdAt: _readOnly, environmentId, ...fields } = input;
    const { row } = await this.locate(p, engine, id);
    checkEngineFields(engine, fields);
    if (typeof environmentId === 'string' && environmentId !== row.environmentId) {
      await moveTarget(this.projects, p, environmentId, 'environmentId');
      fields.environmentId = environmentId;
    }
    if (typeof fields.appName === 'string' && fields.appName !== row.appName) {
      await this.access.assertAppNameFree(row.serverId, fields.appName, row.id);
    }
    checkFields(engine, fields);
    await checkNetworks(this.db, p, row.serverId, fields);
    if (typeof fields.externalPort === 'number' && fields.externalPort !== row.externalPort) {
      await assertHostPortsFree(this.db, row.serverId, hostPortsOf(null, fields.externalPort), row.id, 'externalPort');
    }
    if (fields.endpointSpecCluster !== undefined) {
      await assertHostPortsFree(this.db, row.serverId, hostPortsOf(fields.endpointSpecCluster), row.id, 'endpointSpecCluster');
    }
    const columns = this.codecs[engine].columns(fields);
    if (Object.keys(columns).length === 0) return this.record(row);
    const updated = await this.write(() =>
      this.db.updateTable('databaseServices').set(columns as never).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),
    );
    return this.record(updated);
  }


  async move(p: Principal, engine: DatabaseEngine, id: string, targetEnvironmentId: string) {
    const { row } = await this.locate(p, engine, id);
    await moveTarget(this.projects, p, targetEnvironmentId, 'targetEnvironmentId');
    const moved = await this.db
      .updateTable('databaseServices')
      .set({ environmentId: targetEnvironmentId })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(moved);
  }
}

/** Fields an engine does not take are refused, naming them. */
function checkEngineFields(engine: DatabaseEngine, f: Values) {
  const spec = ENGINES[engine];
  if (!spec.takesDatabaseName && f.databaseName !== undefined) throw Invalid('databaseName', `${spec.label} takes no database name`);
  if (!spec.takesRootPassword && f.rootPassword !== undefined) throw Invalid('rootPassword', `${spec.label} takes no root password`);
  if (!spec.takesReplicaSet && f.replicaSet !== undefined) throw Invalid('replicaSet', 'MongoDB only');
}

function checkPassword(f: Values, field: string) {
  const value = f[field];
  if (typeof value !== 'string') return;
  if (value === '') throw Invalid(field, 'must not be empty');
  if (/[\u0000-\u001f\u007f]/.test(value)) throw Invalid(field, 'must not contain control characters');
}

/** Rules beyond the contract's field shapes, each failure naming its field. */
function checkFields(engine: DatabaseEngine, f: Values) {
  checkPassword(f, 'databasePassword');
  checkPassword(f, 'rootPassword');
  // MySQL reserves `root` for MYSQL_ROOT_PASSWORD; its image refuses MYSQL_USER=root.
  if ((engine === 'mysql' || engine === 'mariadb') && typeof f.databaseUser === 'string' && f.databaseUser.toLowerCase() === 'root') {
    throw Invalid('databaseUser', 'root is the root user: choose another name');
  }
  if (typeof f.containerImage === 'string' && !isImageReference(f.containerImage)) {
    throw Invalid('containerImage', `must be an image reference such as ${ENGINES[engine].defaultImage}`);
  }
  checkInteger(f, 'externalPort', 1, 65535);
  checkReplicas(f);
  checkResources(f);
  if (Array.isArray(f.networkIds)) {
    const bad = (f.networkIds as string[]).find((n) => !NETWORK_NAME.test(n));
    if (bad !== undefined) throw Invalid('networkIds', `${JSON.stringify(bad)} is not a Docker network name or id`);
  }
}
