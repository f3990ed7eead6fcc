import type { Contracts, InputOf, OutputOf } from '@skiff/contracts';
import type { ApplicationMount, Db } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import { mayUseHostPrivileges } from '../compose/host-privileges.js';
import { type ServiceDeps, iso, uniqueAs } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { assertVolumeNameAllowed } from './volume-names.js';

type MountRecord = OutputOf<Contracts['mounts']['all']>[number];
type CreateInput = InputOf<Contracts['mounts']['create']>;
type UpdateInput = InputOf<Contracts['mounts']['update']>;
type MountType = ApplicationMount['type'];

/** The field each type needs; the others are refused for it. */
const OWN_FIELD = { volume: 'volumeName', bind: 'hostPath', file: 'filePath' } as const;
const TYPE_FIELDS = ['volumeName', 'hostPath', 'filePath', 'content', 'secret'] as const;
const DUPLICATE_TARGET = 'already used by another mount of this application';

/**
 * Applications' mounts (`mounts.*`): named volumes, file mounts and host binds, applied at the
 * next deploy (deploy-mounts.ts turns them into the deploy's spec). Host binds follow the gate of
 * compose host privileges (`mayUseHostPrivileges`): on the platform host only for organizations a
 * platform administrator trusts, checked when saved and again when deployed.
 */
export class MountService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
  ) {}

  private get db(): Db {
    return this.deps.db;
  }

  async all(p: Principal, applicationId: string): Promise<MountRecord[]> {
    await this.access.find(p, 'application', applicationId);
    const rows = await this.db.selectFrom('applicationMounts').selectAll().where('applicationId', '=', applicationId).orderBy('createdAt').orderBy('id').execute();
    return rows.map(mountRecord);
  }

  async create(p: Principal, input: CreateInput): Promise<MountRecord> {
    const { row: app, project } = await this.access.find(p, 'application', input.applicationId);
    checkTypeFields(input.type, input);
    if (input.type === 'bind') await assertBindAllowed(this.db, project.organizationId, app.serverId, 'hostPath');
    if (input.type === 'volume') await assertVolumeNameAllowed(this.db, app, input.volumeName!);
    const row = await uniqueAs('mountPath', DUPLICATE_TARGET, () =>
      this.db
        .insertInto('applicationMounts')
        .values({
          id: this.deps.ids('mnt'),
          applicationId: app.id,
          type: input.type,
          volumeName: input.volumeName ?? null,
          hostPath: input.hostPath ?? null,
          filePath: input.filePath ?? null,
          content: this.contentColumn(input.type, input.content, input.secret ?? false),
          secret: input.type === 'file' && (input.secret ?? false),
          mountPath: input.mountPath,
          createdAt: this.deps.clock(),
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return mountRecord(row);
  }

  async update(p: Principal, input: UpdateInput): Promise<MountRecord> {
    const { mount, organizationId, serverId, app } = await this.find(p, input.mountId);
    checkTypeFields(mount.type, { ...input, [OWN_FIELD[mount.type]]: input[OWN_FIELD[mount.type]] ?? 'kept' });
    if (mount.type === 'bind') await assertBindAllowed(this.db, organizationId, serverId, 'hostPath');
    if (mount.type === 'volume' && input.volumeName !== undefined && input.volumeName !== mount.volumeName) await assertVolumeNameAllowed(this.db, app, input.volumeName);
    const secret = input.secret ?? mount.secret;
    // A changed `secret` re-seals (or opens) the kept text.
    const content = input.content ?? (mount.content === null ? undefined : mount.secret ? this.deps.secrets.open(mount.content) : mount.content);
    const row = await uniqueAs('mountPath', DUPLICATE_TARGET, () =>
      this.db
        .updateTable('applicationMounts')
        .set({
          mountPath: input.mountPath ?? mount.mountPath,
          volumeName: input.volumeName ?? mount.volumeName,
          hostPath: input.hostPath ?? mount.hostPath,
          filePath: input.filePath ?? mount.filePath,
          content: this.contentColumn(mount.type, content, secret),
          secret: mount.type === 'file' && secret,
        })
        .where('id', '=', mount.id)
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return mountRecord(row);
  }

  async remove(p: Principal, mountId: string): Promise<MountRecord> {
    const { mount } = await this.find(p, mountId);
    await this.db.deleteFrom('applicationMounts').where('id', '=', mount.id).execute();
    return mountRecord(mount);
  }

  /** The named volumes of an application's mounts, sorted (what `application.delete` keeps without `deleteVolumes`). */
  async volumeNames(applicationId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('applicationMounts')
      .select('volumeName')
      .distinct()
      .where('applicationId', '=', applicationId)
      .where('type', '=', 'volume')
      .orderBy('volumeName')
      .execute();
    return rows.map((r) => r.volumeName).filter((n): n is string => n !== null);
  }

  private contentColumn(type: MountType, content: string | undefined, secret: boolean): string | null {
    if (type !== 'file' || content === undefined) return null;
    return secret ? this.deps.secrets.seal(content) : content;
  }

  /** A mount, with the rules of its application (another organization's is `No such mount`). */
  private async find(p: Principal, mountId: string) {
    const mount = await this.db.selectFrom('applicationMounts').selectAll().where('id', '=', mountId).executeTakeFirst();
    if (!mount) throw NotFound('No such mount');
    const { row: app, project } = await this.access.through(p, 'application', mount.applicationId, 'mount');
    return { mount, organizationId: project.organizationId, serverId: app.serverId, app };
  }
}

/** Each type takes its own field (required) and refuses the others'; `content` and `secret` are a file's. */
function checkTypeFields(type: MountType, input: Partial<Record<(typeof TYPE_FIELDS)[number], unknown>>): void {
  const own = OWN_FIELD[type];
  if (input[own] === undefined) throw Invalid(own, `required for a ${type} mount`);
  for (const field of TYPE_FIELDS) {
    const fileOnly = field === 'content' || field === 'secret';
    const allowed = field === own || (fileOnly && type === 'file');
    if (!allowed && input[field] !== undefined) throw Invalid(field, `not used by a ${type} mount`);
  }
}

/**
 * Refuses, naming `field`, a host bind on a server the organization may not reach the host of
 * (compose/host-privileges.ts: the platform host unless trusted by a platform administrator).
 */
export async function assertBindAllowed(db: Db, organizationId: string, serverId: string | null, field: string): Promise<void> {
  if (await mayUseHostPrivileges(db, organizationId, serverId)) return;
  throw Invalid(field, 'host bind mounts are refused on the platform host unless a platform administrator trusts the organization (settings.trustOrganization)');
}

export function mountRecord(row: ApplicationMount): MountRecord {
  return {
    mountId: row.id,
    applicationId: row.applicationId,
    type: row.type,
    volumeName: row.volumeName,
    hostPath: row.hostPath,
    filePath: row.filePath,
    content: row.secret ? null : row.content,
    secret: row.secret,
    hasContent: row.content !== null,
    mountPath: row.mountPath,
    createdAt: iso(row.createdAt),
  };
}
