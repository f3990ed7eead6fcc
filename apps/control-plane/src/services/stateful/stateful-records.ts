import type { Db } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import { type ServiceDeps, isUniqueViolation } from '../shared/deps.js';
import { moveTarget } from '../shared/field-rules.js';
import { checkNetworks } from '../shared/networks.js';
import { claimHostPorts, hostPortsOf } from '../shared/published-ports.js';
import { type NewServiceColumns, type NewServiceInput, createService } from '../shared/new-service.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import { serviceTables } from '../shared/service-records.js';
import { type RowOf, type StatefulKind, rowOf } from './stateful-spec.js';

type Values = Record<string, unknown>;

/** How one kind checks and maps the fields of an update. */
export interface ChangeRules {
  /** Refusals that come before anything else is looked at (fields the kind does not take). */
  refuse?: (fields: Values) => void;
  check: (fields: Values) => void;
  columns: (fields: Values) => Record<string, unknown>;
}

/**
 * The rows of one stateful kind (caches, database services): create, update, move, with
 * the unique indexes (app name, published port) answering as bad input naming their field.
 * The kinds keep their own fields, defaults and record shape.
 */
export class StatefulRecords<K extends StatefulKind> {
  private readonly table: 'cacheInstances';
  private readonly idPrefix: string;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly identity: IdentityService,
    /** The unique index of the published port, to tell its violations from the app name's. */
    private readonly portConstraint: string,
    kind: K,
  ) {
    // One query shape serves both tables: their shared columns have the same names and types.
    this.table = serviceTables[kind].table as 'cacheInstances';
    this.idPrefix = serviceTables[kind].idPrefix;
  }

  private get db(): Db {
    return this.deps.db;
  }

  /** Inserts a new row: the shared columns and `own` (the kind's, sealed as it needs). */
  create(p: Principal, input: NewServiceInput, own: Values): Promise<RowOf<K>> {
    const parts = { deps: this.deps, projects: this.projects, access: this.access, identity: this.identity };
    return createService(parts, p, input, {
      idPrefix: this.idPrefix,
      insert: (columns: NewServiceColumns) =>
        this.write(() =>
          this.db
            .insertInto(this.table)
            .values({ ...columns, ...own, detachPlatformNetwork: false } as never)
            .returningAll()
            .executeTakeFirstOrThrow(),
        ),
    });
  }

  /**
   * Changes the fields given after checking them (`environmentId` moves the service;
   * `createdAt` is read-only). Answers the row as it is then.
   */
  async change(p: Principal, located: Located<K>, input: Values, rules: ChangeRules): Promise<RowOf<K>> {
    const row = rowOf(located);
    const { createdAt: _readOnly, environmentId, ...fields } = input;
    rules.refuse?.(fields);
    if (typeof environmentId === 'string' && environmentId !== row.environmentId) {
      await moveTarget(this.projects, p, environmentId, 'environmentId');
      fields.environmentId = environmentId;
    }
    if (typeof fields.appName === 'string' && fields.appName !== row.appName) {
      await this.access.assertAppNameFree(row.serverId, fields.appName, row.id);
    }
    rules.check(fields);
    await checkNetworks(this.db, p, row.serverId, fields);
    const externalPorts = typeof fields.externalPort === 'number' && fields.externalPort !== row.externalPort ? hostPortsOf(null, fields.externalPort) : [];
    const specPorts = fields.endpointSpecCluster !== undefined ? hostPortsOf(fields.endpointSpecCluster) : [];
    const columns = rules.columns(fields);
    if (Object.keys(columns).length === 0) return row as RowOf<K>;
    const write = (db: Db) => this.write(() => db.updateTable(this.table).set(columns as never).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow());
    if (externalPorts.length === 0 && specPorts.length === 0) return write(this.db);
    return this.db.transaction().execute(async (tx) => {
      await claimHostPorts(tx, this.deps, row.serverId, externalPorts, row.id, 'externalPort');
      await claimHostPorts(tx, this.deps, row.serverId, specPorts, row.id, 'endpointSpecCluster');
      return write(tx);
    });
  }

  /** Moves the service to an environment of the same organization the caller may see. */
  async move(p: Principal, located: Located<K>, targetEnvironmentId: string): Promise<RowOf<K>> {
    const row = rowOf(located);
    await moveTarget(this.projects, p, targetEnvironmentId, 'targetEnvironmentId');
    const moved = await this.db
      .updateTable(this.table)
      .set({ environmentId: targetEnvironmentId })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return moved as RowOf<K>;
  }

  /** An insert or update; the unique indexes answer as bad input naming their field. */
  private async write(run: () => Promise<unknown>): Promise<RowOf<K>> {
    try {
      return (await run()) as RowOf<K>;
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw this.portTaken(err) ? Invalid('externalPort', 'already published on this server') : Invalid('appName', 'already used on this server');
      }
      throw err;
    }
  }

  /** Which unique index a violation hit: the published port, or else the app name. */
  private portTaken(err: unknown) {
    const e = err as { constraint?: string; detail?: string };
    return e.constraint === this.portConstraint || (e.detail ?? '').includes('external_port');
  }
}
