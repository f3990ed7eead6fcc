import type { Contracts, OutputOf } from '@skiff/contracts';
import type { CacheInstance } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import type { RecordCodec } from '../shared/record-codec.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { checkDeploySettings, checkPasswords, statefulCodec } from '../stateful/stateful-fields.js';
import { type ChangeRules, StatefulRecords } from '../stateful/stateful-records.js';

export const DEFAULT_CACHE_IMAGE = 'redis:8';

type Values = Record<string, unknown>;
type CacheRecord = OutputOf<Contracts['cache']['one']>;

/**
 * Cache instance (Redis) records: image, password, resources and Swarm settings. Changes
 * apply at the next deploy (cache-lifecycle.ts runs the instance: deploy, rebuild, start,
 * stop, reload, remove, and the redeploy of saveExternalPort).
 */
export class CacheService {
  private readonly codec: RecordCodec<CacheRecord>;
  private readonly rows: StatefulRecords<'cache'>;
  private readonly rules: ChangeRules;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    projects: ProjectService,
    identity: IdentityService,
  ) {
    this.codec = statefulCodec<CacheRecord>(deps.secrets, 'cacheId', ['databasePassword']);
    this.rows = new StatefulRecords(deps, access, projects, identity, 'cache_instances_server_external_port', 'cache');
    this.rules = { check: checkFields, columns: (fields) => this.codec.columns(fields) };
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
    const row = await this.rows.create(p, input, { containerImage: fields.containerImage, databasePassword: this.deps.secrets.seal(fields.databasePassword) });
    return this.record(row);
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
    const { cacheId, ...fields } = input;
    const located = await this.access.find(p, 'cache', cacheId);
    return this.record(await this.rows.change(p, located, fields, this.rules));
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
    const located = await this.access.find(p, 'cache', cacheId);
    return this.record(await this.rows.move(p, located, targetEnvironmentId));
  }
}

/** Rules beyond the contract's field shapes, each failure naming its field. */
function checkFields(f: Values) {
  checkPasswords(f, ['databasePassword']);
  checkDeploySettings(f, 'redis:8 or registry.example.com/cache/redis:8.2');
}
