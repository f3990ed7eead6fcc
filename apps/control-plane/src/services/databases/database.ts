import { randomBytes } from 'node:crypto';
import type { DatabaseEngine, DatabaseService as DatabaseRow } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { RecordCodec } from '../shared/record-codec.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import { checkDeploySettings, checkPasswords, statefulCodec } from '../stateful/stateful-fields.js';
import { StatefulRecords } from '../stateful/stateful-records.js';
import { connectionUrls } from './database-spec.js';
import { type Credentials, ENGINES } from './engines.js';

/** The default database and user names. */
export const DEFAULT_NAME = 'app';

type Values = Record<string, unknown>;
export type DatabaseRecord = Record<string, unknown>;

/** A generated password: 24 URL-safe characters (144 bits). */
export const generatePassword = () => randomBytes(18).toString('base64url');

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
  private readonly rows: StatefulRecords<'database'>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    projects: ProjectService,
    identity: IdentityService,
    private readonly options: { publicIp?: string } = {},
  ) {
    const codec = (engine: DatabaseEngine) =>
      statefulCodec<DatabaseRecord>(deps.secrets, `${ENGINES[engine].router}Id`, ['databasePassword', 'rootPassword']);
    this.rows = new StatefulRecords(deps, access, projects, identity, 'database_services_server_external_port', 'database');
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
    const row = await this.rows.create(p, input, {
      ...fields,
      engine,
      databasePassword: this.deps.secrets.seal(fields.databasePassword),
      rootPassword: fields.rootPassword === null ? null : this.deps.secrets.seal(fields.rootPassword),
    });
    return this.record(row);
  }

  async one(p: Principal, engine: DatabaseEngine, id: string) {
    const { row } = await this.locate(p, engine, id);
    return this.record(row);
  }

  /** `update` and the `save*`/`changeStatus` operations: changes the fields given, after checking them all. */
  async update(p: Principal, engine: DatabaseEngine, id: string, input: Values) {
    const located = await this.locate(p, engine, id);
    const row = await this.rows.change(p, located, input, {
      refuse: (fields) => checkEngineFields(engine, fields),
      check: (fields) => checkFields(engine, fields),
      columns: (fields) => this.codecs[engine].columns(fields),
    });
    return this.record(row);
  }

  async move(p: Principal, engine: DatabaseEngine, id: string, targetEnvironmentId: string) {
    return this.record(await this.rows.move(p, await this.locate(p, engine, id), targetEnvironmentId));
  }
}

/** Fields an engine does not take are refused, naming them. */
function checkEngineFields(engine: DatabaseEngine, f: Values) {
  const spec = ENGINES[engine];
  if (!spec.takesDatabaseName && f.databaseName !== undefined) throw Invalid('databaseName', `${spec.label} takes no database name`);
  if (!spec.takesRootPassword && f.rootPassword !== undefined) throw Invalid('rootPassword', `${spec.label} takes no root password`);
  if (!spec.takesReplicaSet && f.replicaSet !== undefined) throw Invalid('replicaSet', 'MongoDB only');
}

/** Rules beyond the contract's field shapes, each failure naming its field. */
function checkFields(engine: DatabaseEngine, f: Values) {
  checkPasswords(f, ['databasePassword', 'rootPassword']);
  // MySQL reserves `root` for MYSQL_ROOT_PASSWORD; its image refuses MYSQL_USER=root.
  if ((engine === 'mysql' || engine === 'mariadb') && typeof f.databaseUser === 'string' && f.databaseUser.toLowerCase() === 'root') {
    throw Invalid('databaseUser', 'root is the root user: choose another name');
  }
  checkDeploySettings(f, ENGINES[engine].defaultImage);
}
