import type { ApiKey, ApiKeyScopeJson, Db, Member, Organization, PermissionsJson, User } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { defaultPermissions, storedPermissions } from '../../authz/principal.js';
import { isAdmin } from '../../authz/policy.js';
import { hashToken, keyStart, newApiKey } from '../../crypto/tokens.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';
import { type ServiceDeps, givenColumns, iso, uniqueAs } from '../shared/deps.js';
import { servicesOf } from '../shared/service-records.js';
import { MEMBER_COLUMNS } from '../shared/columns.js';
import { compiledOnce } from '../shared/compiled-once.js';

export const userRecord = (u: User) => ({
  userId: u.id,
  email: u.email,
  name: u.name,
  lastName: u.lastName,
  image: u.image,
  createdAt: iso(u.createdAt),
});

type MemberRow = User & { memberId: string; organizationId: string; role: Member['role']; permissions: unknown };

const memberRecord = (r: MemberRow) => ({
  ...userRecord(r),
  organizationId: r.organizationId,
  role: r.role,
  permissions: storedPermissions(r.permissions),
});

export const organizationRecord = (o: Organization) => ({
  organizationId: o.id,
  name: o.name,
  logo: o.logo,
  defaultRole: o.defaultRole,
  ownerId: o.ownerId,
  createdAt: iso(o.createdAt),
});

export const apiKeyRecord = (k: Pick<ApiKey, 'id' | 'name' | 'start' | 'organizationId' | 'createdAt'> & Partial<ApiKey>) => ({
  apiKeyId: k.id,
  name: k.name,
  start: k.start,
  organizationId: k.organizationId,
  createdAt: iso(k.createdAt),
  userId: k.userId,
  scope: k.scope ?? null,
  expiresAt: k.expiresAt ? iso(k.expiresAt) : null,
  lastUsedAt: k.lastUsedAt ? iso(k.lastUsedAt) : null,
});

/** The key's principal: every request's read (PrincipalCache keeps its answer a few seconds). */
const principalOfKey = compiledOnce(['keyHash'], (db: Db, slot) =>
  db
    .selectFrom('apiKeys as k')
    .innerJoin('members as m', (j) => j.onRef('m.userId', '=', 'k.userId').onRef('m.organizationId', '=', 'k.organizationId'))
    .innerJoin('users as u', 'u.id', 'k.userId')
    .select(['k.id as apiKeyId', 'k.userId', 'k.organizationId', 'k.scope', 'k.expiresAt', 'm.role', 'm.permissions', 'm.platformAdmin', 'u.isPlatformAdmin'])
    .where('k.keyHash', '=', slot.keyHash),
);
const membershipOf = compiledOnce(['userId', 'organizationId'], (db: Db, slot) =>
  db.selectFrom('members').select(MEMBER_COLUMNS).where('userId', '=', slot.userId).where('organizationId', '=', slot.organizationId),
);

/** Users, their memberships, API keys and the first-boot owner. */
export class IdentityService {
  constructor(private readonly deps: ServiceDeps) {}

  private get db() {
    return this.deps.db;
  }

  /** The principal behind an API key hash, or null. The hot path of every request. */
  async principalByKeyHash(keyHash: string): Promise<Principal | null> {
    const [row] = await principalOfKey(this.db, { keyHash });
    if (!row) return null;
    return {
      userId: row.userId,
      organizationId: row.organizationId,
      role: row.role,
      apiKeyId: row.apiKeyId,
      permissions: storedPermissions(row.permissions),
      // Platform power only through a membership the platform granted it in (first boot, or an
      // organization the platform administrator created), never one joined by invitation.
      // A key limited to named projects or servers never carries the platform's power.
      isPlatformAdmin: row.isPlatformAdmin && row.platformAdmin && !row.scope?.projectIds && !row.scope?.serverIds,
      scope: row.scope,
      expiresAt: row.expiresAt,
    };
  }

  /**
   * First boot: when there is no user yet, creates the owner, a default organization and one
   * API key, and returns the key (the only time it exists in clear). Otherwise null.
   */
  async bootstrap(owner: { email: string; name: string }): Promise<{ key: string; organizationId: string } | null> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
      if (existing) return null;
      const userId = this.deps.ids('usr');
      const organizationId = this.deps.ids('org');
      await trx
        .insertInto('users')
        .values({ id: userId, email: owner.email, name: owner.name, lastName: null, image: null, isPlatformAdmin: true, defaultOrganizationId: organizationId })
        .execute();
      await trx
        .insertInto('organizations')
        .values({ id: organizationId, name: 'Default', logo: null, defaultRole: 'member', ownerId: userId })
        .execute();
      await trx
        .insertInto('members')
        .values({ id: this.deps.ids('mem'), organizationId, userId, role: 'owner', permissions: JSON.stringify(defaultPermissions()), platformAdmin: true })
        .execute();
      const key = newApiKey();
      await trx
        .insertInto('apiKeys')
        .values({ id: this.deps.ids('key'), userId, organizationId, name: 'initial', keyHash: hashToken(key), start: keyStart(key) })
        .execute();
      return { key, organizationId };
    });
  }

  async membership(userId: string, organizationId: string): Promise<Member | undefined> {
    const [row] = await membershipOf(this.db, { userId, organizationId });
    return row;
  }

  /** The members of an organization, each with its user. */
  private membersOf(organizationId: string) {
    return this.db
      .selectFrom('members as m')
      .innerJoin('users as u', 'u.id', 'm.userId')
      .selectAll('u')
      .select(['m.id as memberId', 'm.role', 'm.permissions', 'm.organizationId'])
      .where('m.organizationId', '=', organizationId);
  }

  private async memberInOrg(p: Principal, userId: string) {
    const row = await this.membersOf(p.organizationId).where('m.userId', '=', userId).executeTakeFirst();
    if (!row) throw NotFound('No such member in this organization');
    return memberRecord(row);
  }

  get(p: Principal) {
    return this.memberInOrg(p, p.userId);
  }

  async one(p: Principal, userId: string) {
    const member = await this.memberInOrg(p, userId);
    if (userId !== p.userId && !isAdmin(p)) throw Forbidden('Only admins can read other members');
    return member;
  }

  async all(p: Principal) {
    const rows = await this.membersOf(p.organizationId).orderBy('u.createdAt').execute();
    return rows.map(memberRecord);
  }

  /**
   * The caller's own profile, and nothing else: no user id is taken, and the platform flag is
   * not a field. A new email does not take over invitations made to it before (they are bound
   * to the account they were made for, see OrganizationService.accept).
   */
  async update(p: Principal, input: { name?: string; lastName?: string; email?: string; image?: string | null }) {
    const columns = givenColumns({ name: input.name, lastName: input.lastName, email: input.email?.toLowerCase(), image: input.image });
    if (Object.keys(columns).length === 0) {
      return userRecord(await this.db.selectFrom('users').selectAll().where('id', '=', p.userId).executeTakeFirstOrThrow());
    }
    const user = await uniqueAs('email', 'another user has this email', () =>
      this.db
        .updateTable('users')
        .set(columns)
        .where('id', '=', p.userId)
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return userRecord(user);
  }

  async remove(p: Principal, userId: string) {
    const member = await this.memberInOrg(p, userId);
    if (member.role === 'owner') throw Forbidden('The owner of an organization cannot be removed');
    if (member.role === 'admin' && p.role !== 'owner' && userId !== p.userId) {
      throw Forbidden('Only the owner can remove an admin');
    }
    const removedFromPlatform = await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('apiKeys').where('userId', '=', userId).where('organizationId', '=', p.organizationId).execute();
      await trx.deleteFrom('members').where('userId', '=', userId).where('organizationId', '=', p.organizationId).execute();
      const other = await trx.selectFrom('members').select(['organizationId']).where('userId', '=', userId).executeTakeFirst();
      if (other) {
        await trx
          .updateTable('users')
          .set({ defaultOrganizationId: other.organizationId })
          .where('id', '=', userId)
          .where('defaultOrganizationId', '=', p.organizationId)
          .execute();
        return false;
      }
      await trx.deleteFrom('invitations').where('inviterId', '=', userId).execute();
      await trx.deleteFrom('users').where('id', '=', userId).execute();
      return true;
    });
    await this.deps.onAccessChange();
    return { userId, removedFromPlatform };
  }

  async assignPermissions(p: Principal, input: Partial<PermissionsJson> & { id: string }) {
    const member = await this.memberInOrg(p, input.id);
    if (member.role !== 'member') {
      throw Invalid('id', 'owners and admins hold every permission; only members take assignments');
    }
    const { id: _id, ...changes } = input;
    await this.checkAccessLists(p.organizationId, changes);
    const permissions: PermissionsJson = { ...member.permissions, ...stripUndefined(changes) };
    await this.db
      .updateTable('members')
      .set({ permissions: JSON.stringify(permissions) })
      .where('userId', '=', input.id)
      .where('organizationId', '=', p.organizationId)
      .execute();
    await this.deps.onAccessChange();
    return permissions;
  }

  /** Every id in the access lists must name a record of the organization. */
  private async checkAccessLists(organizationId: string, lists: Partial<PermissionsJson>) {
    const check = async (field: string, ids: string[] | undefined, found: () => Promise<string[]>) => {
      if (!ids?.length) return;
      const known = new Set(await found());
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length) throw Invalid(field, `unknown in this organization: ${unknown.join(', ')}`);
    };
    const projectIds = () =>
      this.db.selectFrom('projects').select('id').where('organizationId', '=', organizationId).execute().then((r) => r.map((x) => x.id));
    const environmentIds = () =>
      this.db
        .selectFrom('environments as e')
        .innerJoin('projects as p', 'p.id', 'e.projectId')
        .select('e.id')
        .where('p.organizationId', '=', organizationId)
        .execute()
        .then((r) => r.map((x) => x.id));
    const serviceIds = async () => (await servicesOf(this.db, await environmentIds())).map((x) => x.id);
    await check('accessedProjects', lists.accessedProjects, projectIds);
    await check('accessedEnvironments', lists.accessedEnvironments, environmentIds);
    await check('accessedServices', lists.accessedServices, serviceIds);
    const serverIds = () =>
      this.db.selectFrom('servers').select('id').where('organizationId', '=', organizationId).execute().then((r) => r.map((x) => x.id));
    const gitProviderIds = () =>
      this.db
        .selectFrom('gitProviders')
        .select('gitProviderId')
        .where('organizationId', '=', organizationId)
        .execute()
        .then((r) => r.map((x) => x.gitProviderId));
    await check('accessedServers', lists.accessedServers, serverIds);
    await check('accessedGitProviders', lists.accessedGitProviders, gitProviderIds);
  }

  /** Adds a newly created record to a member's access lists, so they keep what they create. */
  async grantCreated(p: Principal, lists: { projects?: string[]; environments?: string[]; services?: string[]; gitProviders?: string[] }) {
    // Owners and admins see it through their role, whatever their key's limits.
    if (p.role !== 'member') return;
    const member = await this.membership(p.userId, p.organizationId);
    if (!member) return;
    const perms = storedPermissions(member.permissions);
    perms.accessedProjects = [...new Set([...perms.accessedProjects, ...(lists.projects ?? [])])];
    perms.accessedEnvironments = [...new Set([...perms.accessedEnvironments, ...(lists.environments ?? [])])];
    perms.accessedServices = [...new Set([...perms.accessedServices, ...(lists.services ?? [])])];
    perms.accessedGitProviders = [...new Set([...perms.accessedGitProviders, ...(lists.gitProviders ?? [])])];
    await this.db.updateTable('members').set({ permissions: JSON.stringify(perms) }).where('id', '=', member.id).execute();
    p.permissions = perms;
    await this.deps.onAccessChange();
  }

  async checkUserOrganizations(p: Principal, userId: string) {
    if (userId !== p.userId) {
      await this.memberInOrg(p, userId);
      if (!isAdmin(p)) throw Forbidden('Only admins can look up other members');
    }
    const rows = await this.db.selectFrom('members').select('organizationId').where('userId', '=', userId).orderBy('createdAt').orderBy('id').execute();
    // `count`: every organization of the user (whether removing them from this one leaves an
    // account elsewhere); `organizationIds`: only those the caller belongs to as well.
    const callers = new Set(
      userId === p.userId
        ? rows.map((r) => r.organizationId)
        : (await this.db.selectFrom('members').select('organizationId').where('userId', '=', p.userId).execute()).map((r) => r.organizationId),
    );
    return { count: rows.length, organizationIds: rows.map((r) => r.organizationId).filter((id) => callers.has(id)) };
  }

  /** Mints a key; callers must have authenticated `userId` itself (never a token alone for an existing account). */
  async issueKey(
    userId: string,
    organizationId: string,
    name: string,
    db = this.db,
    limits: { scope?: ApiKeyScopeJson | null; expiresAt?: Date | null } = {},
  ) {
    const key = newApiKey();
    const scope = limits.scope ? JSON.stringify(limits.scope) : null;
    const row = await db
      .insertInto('apiKeys')
      .values({ id: this.deps.ids('key'), userId, organizationId, name, keyHash: hashToken(key), start: keyStart(key), scope, expiresAt: limits.expiresAt ?? null })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...apiKeyRecord(row), key };
  }

  haveRootAccess(p: Principal) {
    return { haveRootAccess: p.isPlatformAdmin };
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
