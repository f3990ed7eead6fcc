import { randomBytes } from 'node:crypto';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { ComposeStack, Db } from '@skiff/db';
import { parseDotenv, refuseProjectName } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid } from '../../errors.js';
import { type ServiceDeps, uniqueAs } from '../shared/deps.js';
import { commandArgs } from './compose-settings.js';
import { checkGitSource, checkInsideSource, checkInteger, checkSourceReferences, moveTarget } from '../shared/field-rules.js';
import type { IdentityService } from '../identity/identity.js';
import type { ProxyConfig } from '../domains/proxy-config.js';
import type { ProjectService } from '../projects/projects.js';
import { createService } from '../shared/new-service.js';
import { RecordCodec } from '../shared/record-codec.js';
import { deleteWorkloadRecord, wasDeployed } from '../deployments/workloads.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { assertNoHostPrivileges } from './host-privileges.js';
import { claimHostPorts, stackHostPorts, stackVariables } from '../shared/published-ports.js';

/** Every column that says where the compose file comes from; `disconnectGitProvider` clears them. */
const SOURCE_FIELDS = [
  'repository', 'owner', 'branch', 'forgeAId', 'triggerType',
  'forgeBId', 'forgeBRepository', 'forgeBOwner', 'forgeBBranch', 'forgeBPathNamespace', 'forgeBProjectId',
  'forgeCId', 'forgeCRepository', 'forgeCRepositorySlug', 'forgeCOwner', 'forgeCBranch',
  'forgeDId', 'forgeDRepository', 'forgeDOwner', 'forgeDBranch',
  'customGitUrl', 'customGitBranch', 'customGitSSHKeyId', 'watchPaths',
] as const;

/** The settings a compose domain's upstream is made of (proxy-config.ts composeServiceUpstream). */
const ROUTE_FIELDS = ['appName', 'randomize', 'suffix'] as const;

type Values = Record<string, unknown>;
type ComposeRecord = OutputOf<Contracts['compose']['one']>;

/** A deploy-webhook token: 32 random bytes, URL-safe. */
const webhookToken = () => randomBytes(32).toString('base64url');

/**
 * Compose stack records: source, compose file and deploy settings. Deploys: compose-deploy.ts;
 * stop, start, delete: WorkloadLifecycle; the file as deployed: compose-files.ts.
 */
export class ComposeService {
  private readonly codec: RecordCodec<ComposeRecord>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly identity: IdentityService,
    private readonly proxy: ProxyConfig,
  ) {
    this.codec = new RecordCodec<ComposeRecord>(deps.secrets, {
      idField: 'composeId',
      blankWhenNull: ['env'],
      sealed: ['env', 'refreshToken'],
      json: ['watchPaths'],
      // Sealed config files (config-files.ts): sent to the agent, never answered; the ports of its last deploy: port checks only.
      hidden: ['configFiles', 'deployedHostPorts'],
    });
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: ComposeStack) => this.codec.record(row);

  async create(
    p: Principal,
    input: {
      name: string;
      environmentId: string;
      appName?: string;
      sourceType?: string;
      composeType?: string;
      description?: string | null;
      serverId?: string | null;
      composeFile?: string;
    },
  ) {
    const row = await createService({ deps: this.deps, projects: this.projects, access: this.access, identity: this.identity }, p, input, {
      idPrefix: 'cmp',
      checkAppName: (appName) => {
        const refusal = refuseProjectName(appName);
        if (refusal) throw Invalid('appName', refusal);
      },
      insert: async (columns) => {
        await assertNoHostPrivileges(this.db, p.organizationId, columns.serverId ?? null, input.composeFile ?? '');
        const insert = (db: Db) =>
          this.write(() =>
            db
              .insertInto('composeStacks')
              .values({
                ...columns,
                sourceType: input.sourceType ?? 'raw',
                composeType: input.composeType ?? 'container-compose',
                composeFile: input.composeFile ?? '',
                composePath: 'docker-compose.yml',
                enableSubmodules: false,
                autoDeploy: true,
                randomize: false,
                isolatedDeployment: false,
                isolatedDeploymentsVolume: false,
              })
              .returningAll()
              .executeTakeFirstOrThrow(),
          );
        const ports = stackHostPorts(this.deps, input.composeFile ?? '');
        if (ports.length === 0) return insert(this.db);
        return this.db.transaction().execute(async (tx) => {
          await claimHostPorts(tx, this.deps, columns.serverId ?? null, ports, columns.id, 'composeFile');
          return insert(tx);
        });
      },
    });
    return this.record(row);
  }

  /** An insert or update; the unique index on (server, appName) answers as bad input. */
  private write(run: () => Promise<ComposeStack>): Promise<ComposeStack> {
    return uniqueAs('appName', 'already used on this server', run);
  }

  async one(p: Principal, composeId: string) {
    const { row } = await this.access.find(p, 'compose', composeId);
    return this.record(row);
  }

  /** `compose.update`: changes the fields given, after checking them. */
  async update(p: Principal, input: Values & { composeId: string }) {
    const { composeId, ...fields } = input;
    const { row, project } = await this.access.find(p, 'compose', composeId);
    await this.check(p, row, fields);
    if (typeof fields.composeFile === 'string') {
      await assertNoHostPrivileges(this.db, project.organizationId, row.serverId, fields.composeFile);
    }
    return this.set(row, fields);
  }

  /**
   * Changes the given fields of the stack (already checked). A change of what its routes dial
   * (`appName`, `randomize`, `suffix`: the alias `<service>.<appName>` of a routed service)
   * also queues the proxy configuration of the servers its domains are on; the stack's services
   * get the new alias at its next deploy.
   */
  async set(row: ComposeStack, fields: Values) {
    const columns = this.codec.columns(fields);
    if (Object.keys(columns).length === 0) return this.record(row);
    const ports = this.portsToClaim(row, fields);
    const write = async (db: Db) => {
      await claimHostPorts(db, this.deps, row.serverId, ports, row.id, 'composeFile');
      return this.write(() => db.updateTable('composeStacks').set(columns as never).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow());
    };
    const routing = ROUTE_FIELDS.find((f) => f in columns);
    const updated = routing
      ? await this.proxy.change(this.db, (tx) => this.proxy.serversRoutingTo(tx, { composeId: row.id }), write, { field: routing })
      : ports.length
        ? await this.db.transaction().execute(write)
        : await write(this.db);
    return this.record(updated);
  }

  /**
   * The host ports a change publishes: a new raw file's, the file's with new variables (a
   * `${PORT}` reads the stack's own `env`; one naming another scope's variable is checked at
   * deploy, with the resolved `.env`), or the stored file's when the stack becomes raw again.
   */
  private portsToClaim(row: ComposeStack, fields: Values): string[] {
    const file = typeof fields.composeFile === 'string' ? fields.composeFile : null;
    const env = typeof fields.env === 'string' ? fields.env : null;
    const raw = ((fields.sourceType as string | undefined) ?? row.sourceType) === 'raw';
    const becomesRaw = raw && row.sourceType !== 'raw';
    if (file === null && !becomesRaw && (env === null || !raw)) return [];
    const variables = env !== null ? parseDotenv(env).variables : stackVariables(this.deps.secrets, row.env);
    return stackHostPorts(this.deps, file ?? row.composeFile, variables);
  }

  /** Rules beyond the contract's field shapes, each failure naming its field. */
  private async check(p: Principal, row: ComposeStack, f: Values) {
    if (typeof f.appName === 'string' && f.appName !== row.appName) {
      const refusal = refuseProjectName(f.appName);
      if (refusal) throw Invalid('appName', refusal);
      await this.access.assertAppNameFree(row.serverId, f.appName, row.id);
    }
    checkInteger(f, 'forgeBProjectId', 1);
    checkGitSource(f);
    checkInsideSource(f, ['composePath']);
    if (typeof f.composePath === 'string' && f.composePath.startsWith('/')) {
      throw Invalid('composePath', 'must be relative to the repository root');
    }
    if (typeof f.suffix === 'string' && !/^[a-zA-Z0-9_-]{0,32}$/.test(f.suffix)) {
      throw Invalid('suffix', 'at most 32 letters, digits, underscores and hyphens');
    }
    // Only a compose command of the stack's type, checked again whenever the type changes.
    if (f.command !== undefined || f.composeType !== undefined) {
      const command = f.command !== undefined ? (f.command as string | null) : row.command;
      if (command && command.trim() !== '') commandArgs((f.composeType as string | undefined) ?? row.composeType, command);
    }
    await checkSourceReferences(this.access, p, f);
  }

  /**
   * Removes a stack that was never deployed, at once, with its domains (and their routes): the
   * undo of a deployTemplate that failed half way. compose.delete is WorkloadLifecycle.delete,
   * which removes a deployed stack's containers first; a deployed stack is refused here.
   */
  async delete(p: Principal, composeId: string, deleteVolumes = false) {
    const { row } = await this.access.find(p, 'compose', composeId);
    const owner = { kind: 'compose' as const, id: composeId };
    const queued = await this.db.transaction().execute(async (tx) => {
      if (await wasDeployed(tx, owner)) throw new DomainError('BAD_REQUEST', `Compose stack ${row.appName} was deployed: delete it with compose.delete`);
      return deleteWorkloadRecord(tx, owner, this.proxy);
    });
    if (queued > 0) this.proxy.notify();
    return { ...this.record(row), deleteVolumes };
  }

  /** Moves the stack to an environment of the same organization the caller may see. */
  async move(p: Principal, composeId: string, targetEnvironmentId: string) {
    const { row } = await this.access.find(p, 'compose', composeId);
    await moveTarget(this.projects, p, targetEnvironmentId, 'targetEnvironmentId');
    return this.set(row, { environmentId: targetEnvironmentId });
  }

  /** A new random webhook token; the previous one stops working. */
  async refreshToken(p: Principal, composeId: string) {
    const { row } = await this.access.find(p, 'compose', composeId);
    return this.set(row, { refreshToken: webhookToken() });
  }

  async disconnectGitProvider(p: Principal, composeId: string) {
    const { row } = await this.access.find(p, 'compose', composeId);
    const cleared = Object.fromEntries(SOURCE_FIELDS.map((f) => [f, null]));
    return this.set(row, { ...cleared, sourceType: 'raw', enableSubmodules: false });
  }
}
