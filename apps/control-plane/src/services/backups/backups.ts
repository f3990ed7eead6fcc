import { ENGINE_OF_ROUTER } from '../databases/engines.js';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Backup, ComposeStack } from '@skiff/db';
import { ComposeError, composeServiceNames, cronError, normalizeBackupPrefix } from '@skiff/domain';
import { isAdmin } from '../../authz/policy.js';
import type { Principal } from '../../authz/principal.js';
import { Forbidden, Invalid } from '../../errors.js';
import { iso, type ServiceDeps } from '../shared/deps.js';
import type { DestinationService } from './destinations.js';
import { type BackupLimits, DEFAULT_BACKUP_LIMITS, assertBackupRoom } from './backup-limits.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { answeredMetadata, mergedMetadata, openBackupMetadata } from './backup-metadata.js';
import { allOfOrganization, findOfOrganization } from '../shared/organization-records.js';

type BackupRecord = OutputOf<Contracts['backup']['one']>;
type DatabaseKind = 'dbA' | 'dbB' | 'dbC' | 'dbD' | 'dbE';
type DatabaseType = DatabaseKind | 'web-server';

const DB_KINDS: DatabaseKind[] = ['dbA', 'dbB', 'dbC', 'dbD', 'dbE'];
const DB_FIELDS = ['dbAId', 'dbBId', 'dbCId', 'dbDId', 'dbEId'] as const;
type DbField = (typeof DB_FIELDS)[number];
const dbField = (kind: DatabaseKind) => `${kind}Id` as DbField;

/** A compose service name as compose files write service keys. */
const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

interface Settings {
  schedule: string;
  enabled?: boolean | null;
  prefix: string;
  destinationId: string;
  keepLatestCount?: number | null;
  database: string;
  databaseType: DatabaseType;
  serviceName?: string | null;
  includeEncryptionKey?: boolean;
  metadata?: unknown;
}

export interface CreateBackupInput extends Settings {
  dbAId?: string | null;
  dbBId?: string | null;
  dbCId?: string | null;
  dbDId?: string | null;
  dbEId?: string | null;
  composeId?: string | null;
  backupType?: 'database' | 'compose';
  userId?: string | null;
}

export interface UpdateBackupInput extends Settings {
  backupId: string;
}

const given = (v: string | null | undefined): v is string => v !== null && v !== undefined;
const blank = (v: string | null | undefined) => v === null || v === undefined || v === '';

/**
 * Backup schedules: one target each (a database service (dbA..dbE), a database
 * inside a compose stack, or the platform itself), a destination, and when to run. Access
 * follows the target: whoever may see the service may manage its backups; the platform
 * backup is the admins'. Running backups comes with the agent.
 */
export class BackupService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly destinations: DestinationService,
    private readonly limits: BackupLimits = DEFAULT_BACKUP_LIMITS,
  ) {}

  private get db() {
    return this.deps.db;
  }

  record = (row: Backup): BackupRecord => {
    const { id, metadata, createdAt, lastScheduledAt: _tick, ...rest } = row;
    return {
      backupId: id,
      ...rest,
      backupType: rest.backupType as BackupRecord['backupType'],
      databaseType: rest.databaseType as BackupRecord['databaseType'],
      metadata: answeredMetadata(openBackupMetadata(this.deps.secrets, metadata)),
      createdAt: iso(createdAt),
    };
  };

  /** Checks shared by create and update, returning the normalised column values; `stored` is the sealed metadata an update keeps secrets of. */
  private async settings(p: Principal, s: Settings, stored: string | null = null) {
    const why = cronError(s.schedule);
    if (why) throw Invalid('schedule', `not a valid cron expression: ${why}`);
    if (/[\x00-\x1f\x7f\\]/.test(s.prefix)) throw Invalid('prefix', 'must not contain control characters or backslashes');
    const prefix = normalizeBackupPrefix(s.prefix);
    if (prefix === null) throw Invalid('prefix', 'must not contain . or .. segments');
    // The name reaches the dump tool as an argument: it must not read as an option.
    if (s.database.startsWith('-') || /[\x00-\x1f\x7f]/.test(s.database)) {
      throw Invalid('database', 'must not start with - or contain control characters');
    }
    if (s.includeEncryptionKey === true && s.databaseType !== 'web-server') {
      throw Invalid('includeEncryptionKey', 'only the platform (web-server) backup can include the encryption key');
    }
    await this.destinations.reference(p, s.destinationId);
    return {
      schedule: s.schedule.trim(),
      prefix,
      destinationId: s.destinationId,
      keepLatestCount: s.keepLatestCount ?? null,
      database: s.database,
      databaseType: s.databaseType,
      metadata: s.metadata === undefined || s.metadata === null ? null : this.deps.secrets.seal(JSON.stringify(this.metadataToStore(s.metadata, stored))),
    };
  }

  private metadataToStore(next: unknown, stored: string | null) {
    return mergedMetadata(next as Parameters<typeof mergedMetadata>[0], openBackupMetadata(this.deps.secrets, stored) ?? undefined);
  }

  private checkServiceName(serviceName: string | null | undefined, compose: boolean): string | null {
    if (!compose) {
      if (!blank(serviceName)) throw Invalid('serviceName', 'only a compose backup names a service');
      return null;
    }
    if (blank(serviceName)) throw Invalid('serviceName', 'required when backupType is compose');
    if (!SERVICE_NAME.test(serviceName!)) throw Invalid('serviceName', 'must be a compose service name (letters, digits, ., _ and -)');
    return serviceName!;
  }

  /** The one target the input names, checked against `databaseType` and `backupType`. */
  private async target(p: Principal, input: CreateBackupInput) {
    const backupType = input.backupType ?? 'database';
    const targets: Record<DbField | 'composeId', string | null> = {
      dbAId: null, dbBId: null, dbCId: null, dbDId: null, dbEId: null, composeId: null,
    };
    const named = (field: DbField | 'composeId') => given(input[field]);
    if (input.databaseType === 'web-server') {
      if (backupType === 'compose') throw Invalid('backupType', 'the platform (web-server) backup is not a compose backup');
      for (const field of [...DB_FIELDS, 'composeId'] as const) {
        if (named(field)) throw Invalid(field, 'the platform (web-server) backup takes no target');
      }
      this.checkServiceName(input.serviceName, false);
      if (!isAdmin(p)) throw Forbidden('The platform backup needs the admin role');
      return { backupType, serviceName: null, ...targets };
    }
    if (backupType === 'compose') {
      for (const field of DB_FIELDS) {
        if (named(field)) throw Invalid(field, 'a compose backup names composeId, not a database service');
      }
      if (!named('composeId')) throw Invalid('composeId', 'required when backupType is compose');
      const serviceName = this.checkServiceName(input.serviceName, true);
      const { row } = await this.access.reference(p, 'compose', input.composeId!, 'composeId');
      assertServiceOfStack(row, serviceName!);
      return { backupType, serviceName, ...targets, composeId: input.composeId! };
    }
    const own = dbField(input.databaseType);
    for (const field of DB_FIELDS) {
      if (field !== own && named(field)) throw Invalid(field, `must be empty when databaseType is ${input.databaseType} (set ${own})`);
    }
    if (named('composeId')) throw Invalid('composeId', 'only a compose backup names a compose stack');
    if (!named(own)) throw Invalid(own, `required when databaseType is ${input.databaseType}`);
    this.checkServiceName(input.serviceName, false);
    const { row } = await this.access.reference(p, 'database', input[own]!, own);
    if (ENGINE_OF_ROUTER[input.databaseType as keyof typeof ENGINE_OF_ROUTER]?.engine !== row.engine) {
      throw Invalid(own, `no such ${ENGINE_OF_ROUTER[input.databaseType as keyof typeof ENGINE_OF_ROUTER]?.label ?? 'database'} service`);
    }
    return { backupType, serviceName: null, ...targets, [own]: input[own]! };
  }

  private async checkUser(p: Principal, userId: string | null | undefined): Promise<string> {
    if (!given(userId)) return p.userId;
    const member = await this.db
      .selectFrom('members')
      .select('id')
      .where('userId', '=', userId)
      .where('organizationId', '=', p.organizationId)
      .executeTakeFirst();
    if (!member) throw Invalid('userId', 'not a member of this organization');
    return userId;
  }

  async create(p: Principal, input: CreateBackupInput) {
    if (!DB_KINDS.includes(input.databaseType as DatabaseKind) && input.databaseType !== 'web-server') {
      throw Invalid('databaseType', 'unknown database type');
    }
    const target = await this.target(p, input);
    const settings = await this.settings(p, input);
    const userId = await this.checkUser(p, input.userId);
    const row = await this.db.transaction().execute(async (tx) => {
      await assertBackupRoom(tx, this.limits, p.organizationId, roomOf(target));
      return tx
        .insertInto('backups')
        .values({
          id: this.deps.ids('bkp'),
          organizationId: p.organizationId,
          ...settings,
          ...target,
          enabled: input.enabled ?? true,
          userId,
          includeEncryptionKey: input.includeEncryptionKey ?? false,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return this.record(row);
  }

  /** A backup the caller may see: of their organization, with its target visible to them. */
  async find(p: Principal, backupId: string): Promise<Backup> {
    const row = await findOfOrganization(this.db, 'backups', p, backupId, 'backup');
    if (row.composeId) {
      await this.access.find(p, 'compose', row.composeId);
    } else {
      const field = DB_FIELDS.find((f) => row[f] !== null);
      if (field) await this.access.find(p, 'database', row[field]!);
      else if (!isAdmin(p)) throw Forbidden('The platform backup is visible to admins only');
    }
    return row;
  }

  async one(p: Principal, backupId: string) {
    return this.record(await this.find(p, backupId));
  }

  async update(p: Principal, input: UpdateBackupInput) {
    const row = await this.find(p, input.backupId);
    const compose = row.backupType === 'compose';
    if (compose) {
      if (input.databaseType === 'web-server') throw Invalid('databaseType', 'a compose backup dumps a database (dbA…dbE)');
    } else if (input.databaseType !== row.databaseType) {
      throw Invalid('databaseType', `stays ${row.databaseType}: the target cannot change (create another backup)`);
    }
    const serviceName = this.checkServiceName(input.serviceName, compose);
    // Only a new service is checked: a backup whose service has since left the file can still be disabled or renamed.
    if (compose && serviceName !== row.serviceName) assertServiceOfStack((await this.access.find(p, 'compose', row.composeId!)).row, serviceName!);
    const settings = await this.settings(p, input, row.metadata);
    const updated = await this.db.transaction().execute(async (tx) => {
      // Another service of the stack is another target: it must have room, as at create.
      if (compose && serviceName !== row.serviceName) {
        await assertBackupRoom(tx, this.limits, p.organizationId, { table: 'backups', column: 'composeId', id: row.composeId!, field: 'serviceName', serviceName }, { adds: false });
      }
      return tx
        .updateTable('backups')
        .set({
          ...settings,
          serviceName,
          enabled: input.enabled ?? row.enabled,
          includeEncryptionKey: input.includeEncryptionKey ?? row.includeEncryptionKey,
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return this.record(updated);
  }

  async remove(p: Principal, backupId: string) {
    const row = await this.find(p, backupId);
    await this.db.deleteFrom('backups').where('id', '=', row.id).execute();
    return this.record(row);
  }

  /** `user.getBackups`: every backup of the caller's organization (admins). */
  async ofOrganization(p: Principal) {
    return (await allOfOrganization(this.db, 'backups', p)).map(this.record);
  }
}

/**
 * A compose backup's service is one of its stack's, where the control plane knows the file: a
 * raw file written and parsed. A git source's file is only read by the agent (its runs say
 * when the service is missing), and an empty or unparsable raw file names no service yet.
 */
function assertServiceOfStack(stack: Pick<ComposeStack, 'sourceType' | 'composeFile'>, serviceName: string) {
  if (stack.sourceType !== 'raw' || !stack.composeFile || stack.composeFile.trim() === '') return;
  let names: string[];
  try {
    names = composeServiceNames(stack.composeFile);
  } catch (err) {
    if (err instanceof ComposeError) return;
    throw err;
  }
  if (!names.includes(serviceName)) throw Invalid('serviceName', `the stack's compose file has no service ${serviceName}`);
}

/** The target a new backup counts against (the platform backup: the organization only). */
function roomOf(target: { composeId: string | null; serviceName: string | null } & Record<DbField, string | null>): Parameters<typeof assertBackupRoom>[3] {
  if (target.composeId) return { table: 'backups', column: 'composeId', id: target.composeId, field: 'composeId', serviceName: target.serviceName };
  const column = DB_FIELDS.find((f) => target[f] !== null);
  return column ? { table: 'backups', column, id: target[column]!, field: column } : { table: 'backups', column: null, field: 'databaseType' };
}
