import type { Contracts, OutputOf } from '@skiff/contracts';
import type { CacheInstance } from '@skiff/db';
import { isImageReference } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { type ServiceDeps, isUniqueViolation } from '../shared/deps.js';
import { checkInteger, checkReplicas, checkResources, moveTarget } from '../shared/field-rules.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import { checkNetworks } from '../shared/networks.js';
import { assertHostPortsFree, hostPortsOf } from '../shared/published-ports.js';
import { createService } from '../shared/new-service.js';
import { RecordCodec } from '../shared/record-codec.js';
import type { ServiceAccess } from '../shared/service-access.js';

const CLUSTER = [
  'healthCheckCluster', 'restartPolicyCluster', 'placementCluster', 'updateConfigCluster',
  'rollbackConfigCluster', 'modeCluster', 'labelsCluster', 'networkCluster',
  'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster',
] as const;

export const DEFAULT_CACHE_IMAGE = 'redis:8';

type Values = Record<string, unknown>;
type CacheRecord = OutputOf<Contracts['cache']['one']>;

/** Docker's rule for network names (and ids, which are hex). */
const NETWORK_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** Which unique index a violation hit: the published port, or else the app name. */
const portTaken = (err: unknown) => {
  const e = err as { constraint?: string; detail?: string };
  return e.constraint === 'cache_instances_server_external_port' || (e.detail ?? '').includes('external_port');
};

/**
 * Cache instance (Redis) records: image, password, resources and Swarm settings. Changes
 * apply at the next deploy (cache-lifecycle.ts runs the instance: deploy, rebuild, start,
 * stop, reload, remove, and the redeploy of saveExternalPort).
 */
export class CacheService {
  private readonly codec: RecordCodec<CacheRecord>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly identity: IdentityService,
  ) {
    this.codec = new RecordCodec<CacheRecord>(deps.secrets, {
      idField: 'cacheId',
      blankWhenNull: ['env'],
      sealed: ['env'],
      writeOnly: ['databasePassword'],
      json: ['args', 'networkIds', ...CLUSTER],
      // The deploys' forceUpdate counter (deployment records and commands are pruned): internal.
      hidden: ['deployCount'],
    });
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: CacheInstance) => this.codec.record(row);

  async create(
    p: Principal,
    input: {
      name: string;
      appName?: string;
      databasePassword: string;
      containerImage?: string;
      environmentId: string;
      description?: string | null;
      serverId?: string | null;
    },
  ) {
    const fields = { databasePassword: input.databasePassword, containerImage: input.containerImage ?? DEFAULT_CACHE_IMAGE };
    checkFields(fields);
    const row = await createService({ deps: this.deps, projects: this.projects, access: this.access, identity: this.identity }, p, input, {
      idPrefix: 'rds',
      insert: (columns) =>
        this.write(() =>
          this.db
            .insertInto('cacheInstances')
            .values({
              ...columns,
              containerImage: fields.containerImage,
              databasePassword: this.deps.secrets.seal(fields.databasePassword),
              detachPlatformNetwork: false,
            })
            .returningAll()
            .executeTakeFirstOrThrow(),
        ),
    });
    return this.record(row);
  }

  /** An insert or update; the unique indexes answer as bad input naming their field. */
  private async write(run: () => Promise<CacheInstance>): Promise<CacheInstance> {
    try {
      return await run();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw portTaken(err) ? Invalid('externalPort', 'already published on this server') : Invalid('appName', 'already used on this server');
      }
      throw err;
    }
  }

  async one(p: Principal, cacheId: string) {
    const { row } = await this.access.find(p, 'cache', cacheId);
    return this.record(row);
  }

  /**
   * `cache.update` and the `save*`/`changeStatus` operations: changes the fields given, after
   * checking them. `environmentId` moves the instance; `createdAt` is read-only.
   */
  async update(p: Principal, input: Values & { cacheId: string }) {
    const { cacheId, createdAt: _readOnly, environmentId, ...fields } = input;
    const { row } = await this.access.find(p, 'cache', cacheId);
    if (typeof environmentId === 'string' && environmentId !== row.environmentId) {
      await moveTarget(this.projects, p, environmentId, 'environmentId');
      fields.environmentId = environmentId;
    }
    if (typeof fields.appName === 'string' && fields.appName !== row.appName) {
      await this.access.assertAppNameFree(row.serverId, fields.appName, row.id);
    }
    checkFields(fields);
    await checkNetworks(this.db, p, row.serverId, fields);
    if (typeof fields.externalPort === 'number' && fields.externalPort !== row.externalPort) {
      await assertHostPortsFree(this.db, row.serverId, hostPortsOf(null, fields.externalPort), row.id, 'externalPort');
    }
    if (fields.endpointSpecCluster !== undefined) {
      await assertHostPortsFree(this.db, row.serverId, hostPortsOf(fields.endpointSpecCluster), row.id, 'endpointSpecCluster');
    }
    const columns = this.codec.columns(fields);
    if (Object.keys(columns).length === 0) return this.record(row);
    const updated = await this.write(() =>
      this.db.updateTable('cacheInstances').set(columns as never).where('id', '=', cacheId).returningAll().executeTakeFirstOrThrow(),
    );
    return this.record(updated);
  }


  saveEnvironment(p: Principal, input: { cacheId: string; env: string | null }) {
    return this.update(p, { cacheId: input.cacheId, env: input.env });
  }

  /** Saves the host port (null: none); CacheLifecycle.saveExternalPort also applies it to a deployed instance. */
  saveExternalPort(p: Principal, input: { cacheId: string; externalPort: number | null }) {
    return this.update(p, input);
  }

  changeStatus(p: Principal, input: { cacheId: string; applicationStatus: string }) {
    return this.update(p, input);
  }

  /** Moves the instance to an environment of the same organization the caller may see. */
  async move(p: Principal, cacheId: string, targetEnvironmentId: string) {
    const { row } = await this.access.find(p, 'cache', cacheId);
    await moveTarget(this.projects, p, targetEnvironmentId, 'targetEnvironmentId');
    const moved = await this.db
      .updateTable('cacheInstances')
      .set({ environmentId: targetEnvironmentId })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(moved);
  }
}

/** Rules beyond the contract's field shapes, each failure naming its field. */
function checkFields(f: Values) {
  if (typeof f.databasePassword === 'string') {
    if (f.databasePassword === '') throw Invalid('databasePassword', 'must not be empty');
    if (/[\u0000-\u001f\u007f]/.test(f.databasePassword)) throw Invalid('databasePassword', 'must not contain control characters');
  }
  if (typeof f.containerImage === 'string' && !isImageReference(f.containerImage)) {
    throw Invalid('containerImage', 'must be an image reference such as redis:8 or registry.example.com/cache/redis:8.2');
  }
  checkInteger(f, 'externalPort', 1, 65535);
  checkReplicas(f);
  checkResources(f);
  if (Array.isArray(f.networkIds)) {
    const bad = (f.networkIds as string[]).find((n) => !NETWORK_NAME.test(n));
    if (bad !== undefined) throw Invalid('networkIds', `${JSON.stringify(bad)} is not a Docker network name or id`);
  }
}
