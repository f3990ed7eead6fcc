import { randomBytes } from 'node:crypto';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Application, Db } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { type ServiceDeps, uniqueAs } from '../shared/deps.js';
import {
  checkGitSource,
  checkInsideSource,
  checkInteger,
  checkReplicas,
  checkResources,
  checkSourceReferences,
} from '../shared/field-rules.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProjectService } from '../projects/projects.js';
import { checkNetworks } from '../shared/networks.js';
import { claimHostPorts, hostPortsOf } from '../shared/published-ports.js';
import { createService } from '../shared/new-service.js';
import { RecordCodec } from '../shared/record-codec.js';
import type { ServiceAccess } from '../shared/service-access.js';

const CLUSTER = [
  'healthCheckCluster', 'restartPolicyCluster', 'placementCluster', 'updateConfigCluster',
  'rollbackConfigCluster', 'modeCluster', 'labelsCluster', 'networkCluster',
  'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster',
] as const;

/** Every column that says where the source comes from; `disconnectGitProvider` clears them. */
const SOURCE_FIELDS = [
  'repository', 'owner', 'branch', 'buildPath', 'forgeAId', 'triggerType',
  'forgeBId', 'forgeBRepository', 'forgeBOwner', 'forgeBBranch', 'forgeBBuildPath', 'forgeBPathNamespace', 'forgeBProjectId',
  'forgeCId', 'forgeCRepository', 'forgeCRepositorySlug', 'forgeCOwner', 'forgeCBranch', 'forgeCBuildPath',
  'forgeDId', 'forgeDRepository', 'forgeDOwner', 'forgeDBranch', 'forgeDBuildPath',
  'customGitUrl', 'customGitBranch', 'customGitBuildPath', 'customGitSSHKeyId',
  'containerImage', 'registryUrl', 'username', 'password', 'watchPaths',
] as const;

type Values = Record<string, unknown>;
const APP_NAME_TAKEN = 'already used on this server';
type ApplicationRecord = OutputOf<Contracts['application']['one']>;

/** Application records: settings, sources, build and environment (stop, start, reload, delete: WorkloadLifecycle). */
export class ApplicationService {
  private readonly codec: RecordCodec<ApplicationRecord>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly identity: IdentityService,
  ) {
    this.codec = new RecordCodec<ApplicationRecord>(deps.secrets, {
      idField: 'applicationId',
      blankWhenNull: ['env'],
      sealed: ['env', 'previewEnv', 'buildArgs', 'previewBuildArgs', 'refreshToken'],
      writeOnly: ['password', 'buildSecrets', 'previewBuildSecrets'],
      json: ['watchPaths', 'previewLabels', 'args', ...CLUSTER],
      // The deploys' forceUpdate counter (deployment records and commands are pruned): internal.
      hidden: ['deployCount'],
    });
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: Application) => this.codec.record(row);

  async create(
    p: Principal,
    input: { name: string; appName?: string; description?: string | null; environmentId: string; serverId?: string | null; sourceType?: string },
  ) {
    const row = await createService({ deps: this.deps, projects: this.projects, access: this.access, identity: this.identity }, p, input, {
      idPrefix: 'app',
      insert: (columns) =>
        this.insert({
          ...columns,
          sourceType: input.sourceType ?? 'git',
          enableSubmodules: false,
          autoDeploy: true,
          previewHttps: false,
          previewCertificateType: 'none',
          enabled: true,
        }),
    });
    return this.record(row);
  }

  private insert(values: Values) {
    return uniqueAs('appName', APP_NAME_TAKEN, async () =>
      (await this.db.insertInto('applications').values(values as never).returningAll().executeTakeFirstOrThrow()) as Application,
    );
  }

  async one(p: Principal, applicationId: string) {
    const { row } = await this.access.find(p, 'application', applicationId);
    return this.record(row);
  }

  /** `application.update` and every `save*`: changes the fields given, after checking them. */
  async update(p: Principal, input: Values & { applicationId: string }) {
    const { applicationId, ...fields } = input;
    const { row } = await this.access.find(p, 'application', applicationId);
    await this.check(p, row, fields);
    const columns = this.codec.columns(fields);
    if (Object.keys(columns).length === 0) return this.record(row);
    const write = (db: Db) =>
      uniqueAs('appName', APP_NAME_TAKEN, () => db.updateTable('applications').set(columns as never).where('id', '=', applicationId).returningAll().executeTakeFirstOrThrow());
    const ports = fields.endpointSpecCluster !== undefined ? hostPortsOf(fields.endpointSpecCluster) : [];
    const updated = ports.length
      ? await this.db.transaction().execute(async (tx) => {
          await claimHostPorts(tx, this.deps, row.serverId, ports, row.id, 'endpointSpecCluster');
          return write(tx);
        })
      : await write(this.db);
    return this.record(updated);
  }

  /** Rules beyond the contract's field shapes, each failure naming its field. */
  private async check(p: Principal, row: Application, f: Values) {
    if (typeof f.appName === 'string' && f.appName !== row.appName) {
      await this.access.assertAppNameFree(row.serverId, f.appName, row.id);
    }
    checkReplicas(f);
    checkInteger(f, 'previewPort', 1, 65535);
    checkInteger(f, 'previewLimit', 0, 100);
    checkInteger(f, 'forgeBProjectId', 1);
    checkResources(f);
    if (typeof f.triggerType === 'string' && !['push', 'tag'].includes(f.triggerType)) {
      throw Invalid('triggerType', 'must be push or tag');
    }
    if (typeof f.previewWildcard === 'string' && !/^\*\.[a-z0-9.-]+$/i.test(f.previewWildcard)) {
      throw Invalid('previewWildcard', 'must look like *.example.com');
    }
    checkGitSource(f);
    checkInsideSource(f, ['buildPath', 'forgeBBuildPath', 'forgeCBuildPath', 'forgeDBuildPath', 'customGitBuildPath', 'dropBuildPath', 'containerContextPath', 'publishDirectory']);
    await checkSourceReferences(this.access, p, f);
    await checkNetworks(this.db, p, row.serverId, f);
  }

  /** A save*Provider: the source fields given, and the source type they imply. */
  saveSource(p: Principal, sourceType: string, input: Values & { applicationId: string }) {
    return this.update(p, { ...input, sourceType });
  }

  /** A new random webhook token (the generic deploy hook's and forge hooks' secret); the previous one stops working. */
  refreshToken(p: Principal, applicationId: string) {
    return this.update(p, { applicationId, refreshToken: randomBytes(32).toString('base64url') });
  }

  disconnectGitProvider(p: Principal, applicationId: string) {
    const cleared = Object.fromEntries(SOURCE_FIELDS.map((f) => [f, null]));
    return this.update(p, { applicationId, ...cleared, sourceType: 'git', enableSubmodules: false });
  }

  async markRunning(p: Principal, applicationId: string) {
    await this.update(p, { applicationId, applicationStatus: 'running' });
    return {};
  }
}
