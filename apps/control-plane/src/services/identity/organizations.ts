import type { Db, Organization } from '@skiff/db';
import { sql } from 'kysely';
import type { Principal, Role } from '../../authz/principal.js';
import { defaultPermissions } from '../../authz/principal.js';
import { hashToken, newInvitationToken } from '../../crypto/tokens.js';
import { Forbidden, Invalid, NotFound, Unauthorized } from '../../errors.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import { type IdentityService, organizationRecord } from './identity.js';
import type { WorkloadRemovals } from '../shared/service-records.js';

const INVITATION_DAYS = 7;

const invitationRecord = (i: {
  id: string;
  organizationId: string;
  email: string;
  role: 'admin' | 'member';
  status: 'pending' | 'accepted' | 'canceled';
  expiresAt: Date;
  createdAt: Date;
}) => ({
  invitationId: i.id,
  organizationId: i.organizationId,
  email: i.email,
  role: i.role,
  status: i.status,
  expiresAt: iso(i.expiresAt),
  createdAt: iso(i.createdAt),
});

const withRoleRecord = (r: Organization & { role: Role; defaultOrganizationId: string | null }) => ({
  ...organizationRecord(r),
  role: r.role,
  isDefault: r.defaultOrganizationId === r.id,
});

/** Organizations, their invitations, and joining through an invitation. */
export class OrganizationService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly identity: IdentityService,
    private readonly workloads: WorkloadRemovals,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** The organizations a user belongs to, with the user's role and default. */
  private organizationsOf(userId: string) {
    return this.db
      .selectFrom('organizations as o')
      .innerJoin('members as m', 'm.organizationId', 'o.id')
      .innerJoin('users as u', 'u.id', 'm.userId')
      .selectAll('o')
      .select(['m.role', 'u.defaultOrganizationId'])
      .where('m.userId', '=', userId);
  }

  private async withRole(p: Principal, organizationId: string) {
    const row = await this.organizationsOf(p.userId).where('o.id', '=', organizationId).executeTakeFirst();
    if (!row) throw NotFound('No such organization');
    return withRoleRecord(row);
  }

  async create(p: Principal, input: { name: string; logo?: string }) {
    const organizationId = this.deps.ids('org');
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('organizations')
        .values({ id: organizationId, name: input.name, logo: input.logo ?? null, defaultRole: 'member', ownerId: p.userId })
        .execute();
      await trx
        .insertInto('members')
        .values({
          id: this.deps.ids('mem'),
          organizationId,
          userId: p.userId,
          role: 'owner',
          permissions: JSON.stringify(defaultPermissions()),
          // A platform administrator acting as one keeps that power in what they create.
          platformAdmin: p.isPlatformAdmin,
        })
        .execute();
    });
    return this.withRole(p, organizationId);
  }

  async all(p: Principal) {
    const rows = await this.organizationsOf(p.userId).orderBy('o.createdAt').execute();
    return rows.map(withRoleRecord);
  }

  one(p: Principal, organizationId: string) {
    return this.withRole(p, organizationId);
  }

  async update(p: Principal, input: { organizationId: string; name: string; logo?: string; defaultRole?: string | null }) {
    const org = await this.withRole(p, input.organizationId);
    if (org.role === 'member') throw Forbidden('Requires the admin role in that organization');
    if (input.defaultRole != null && !['admin', 'member'].includes(input.defaultRole)) {
      throw Invalid('defaultRole', 'must be admin or member');
    }
    const row = await this.db
      .updateTable('organizations')
      .set({ name: input.name, logo: input.logo, defaultRole: input.defaultRole })
      .where('id', '=', input.organizationId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return organizationRecord(row);
  }

  async delete(p: Principal, organizationId: string) {
    const org = await this.withRole(p, organizationId);
    if (org.role !== 'owner') throw Forbidden('Only the owner can delete an organization');
    const { count } = await this.db
      .selectFrom('members')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('userId', '=', p.userId)
      .executeTakeFirstOrThrow();
    if (Number(count) <= 1) throw Invalid('organizationId', 'this is your only organization');
    const queued = await this.db.transaction().execute(async (trx) => {
      const members = await trx.selectFrom('members').select('userId').where('organizationId', '=', organizationId).execute();
      const environments = await trx
        .selectFrom('environments')
        .innerJoin('projects', 'projects.id', 'environments.projectId')
        .select('environments.id')
        .where('projects.organizationId', '=', organizationId)
        .execute();
      let removals = (await this.workloads.queueRemovals(trx, environments.map((e) => e.id))).length;
      removals += await this.workloads.removeRoutes(
        trx,
        { organizationId },
        () => trx.deleteFrom('organizations').where('id', '=', organizationId).execute(),
        'organizationId',
      );
      // Members whose default this was fall back to another organization of theirs.
      for (const { userId } of members) {
        const next = await trx.selectFrom('members').select('organizationId').where('userId', '=', userId).executeTakeFirst();
        await trx
          .updateTable('users')
          .set({ defaultOrganizationId: next?.organizationId ?? null })
          .where('id', '=', userId)
          .where('defaultOrganizationId', '=', organizationId)
          .execute();
      }
      return removals;
    });
    if (queued > 0) this.workloads.notify();
    await this.workloads.removeArchiveFiles();
    await this.deps.onAccessChange();
    const { role: _r, isDefault: _d, ...record } = org;
    return record;
  }

  async setDefault(p: Principal, organizationId: string) {
    await this.withRole(p, organizationId);
    await this.db.updateTable('users').set({ defaultOrganizationId: organizationId }).where('id', '=', p.userId).execute();
    return this.withRole(p, organizationId);
  }

  async invite(p: Principal, input: { email: string; role?: 'admin' | 'member' }) {
    const email = input.email.toLowerCase();
    const org = await this.withRole(p, p.organizationId);
    const role = input.role ?? (org.defaultRole === 'admin' ? 'admin' : 'member');
    if (role === 'admin' && p.role !== 'owner') throw Forbidden('Only the owner can invite admins');
    const already = await this.db
      .selectFrom('members as m')
      .innerJoin('users as u', 'u.id', 'm.userId')
      .select('m.id')
      .where('m.organizationId', '=', p.organizationId)
      .where('u.email', '=', email)
      .executeTakeFirst();
    if (already) throw Invalid('email', 'already a member of this organization');
    // Bound to the account that has the email now (null: a new account), so that a later email
    // change cannot redirect it (see accept).
    const invitee = await this.db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', email).executeTakeFirst();
    const token = newInvitationToken();
    const row = await this.db
      .insertInto('invitations')
      .values({
        id: this.deps.ids('inv'),
        organizationId: p.organizationId,
        email,
        role,
        tokenHash: hashToken(token),
        status: 'pending',
        inviterId: p.userId,
        inviteeId: invitee?.id ?? null,
        expiresAt: new Date(this.deps.clock().getTime() + INVITATION_DAYS * 86_400_000),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...invitationRecord(row), token };
  }

  async allInvitations(p: Principal) {
    const rows = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('organizationId', '=', p.organizationId)
      .orderBy('createdAt', 'desc')
      .execute();
    return rows.map(invitationRecord);
  }

  async removeInvitation(p: Principal, invitationId: string) {
    const row = await this.db
      .updateTable('invitations')
      .set({ status: 'canceled' })
      .where('id', '=', invitationId)
      .where('organizationId', '=', p.organizationId)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (!row) throw Invalid('invitationId', 'no pending invitation with this id in the organization');
    return invitationRecord(row);
  }

  private invitationByToken(token: string) {
    return this.db
      .selectFrom('invitations as i')
      .innerJoin('organizations as o', 'o.id', 'i.organizationId')
      .selectAll('i')
      .select('o.name as organizationName')
      .where('i.tokenHash', '=', hashToken(token))
      .executeTakeFirst();
  }

  async byToken(token: string) {
    const inv = await this.invitationByToken(token);
    if (!inv) throw NotFound('No invitation with this token');
    return {
      invitationId: inv.id,
      organizationId: inv.organizationId,
      organizationName: inv.organizationName,
      email: inv.email,
      role: inv.role,
      status: inv.status,
      expired: inv.expiresAt.getTime() < this.deps.clock().getTime(),
      // Whether the invitation was made for an existing account (accepted with that account's
      // key) rather than a new one (accepted with the token alone). The token's holder learns
      // this from acceptInvitation's answer anyway; nothing about the email's account today.
      userExists: inv.inviteeId !== null,
    };
  }

  /** The pending invitations made for the caller's account (not those to an email it took on later). */
  async invitationsFor(p: Principal) {
    const rows = await this.db
      .selectFrom('invitations as i')
      .innerJoin('organizations as o', 'o.id', 'i.organizationId')
      .selectAll('i')
      .select('o.name as organizationName')
      .where('i.inviteeId', '=', p.userId)
      .where('i.status', '=', 'pending')
      .where('i.expiresAt', '>', this.deps.clock())
      .execute();
    return rows.map((r) => ({ ...invitationRecord(r), organizationName: r.organizationName }));
  }

  /**
   * Accepts an invitation. The token alone never reaches an existing account:
   * - made for an existing account (`inviteeId`): only that account, calling with its own API
   *   key (`caller`), accepts it; it gains the membership and no key (it asks for one with
   *   user.createApiKey when it wants one).
   * - made for a new account: accepted without a key; it creates the user and hands out that
   *   new user's first key, in this organization. Refused once any account has the email
   *   (one that changed its email to it cannot capture the invitation), and refused with a key.
   * The refusal to a caller without a key is the same for both cases and names no account.
   */
  async accept(token: string, name: string | undefined, caller: Principal | null) {
    const inv = await this.invitationByToken(token);
    if (!inv || inv.status !== 'pending' || inv.expiresAt.getTime() < this.deps.clock().getTime()) {
      throw Unauthorized('Invalid or expired invitation token');
    }
    if (caller) {
      if (inv.inviteeId === null || inv.inviteeId !== caller.userId) {
        throw Forbidden('This invitation was not made for the calling account');
      }
      const result = await this.db.transaction().execute(async (trx) => {
        await this.join(trx, inv, caller.userId);
        return { userId: caller.userId, organizationId: inv.organizationId, apiKey: null };
      });
      await this.deps.onAccessChange();
      return result;
    }
    const refused = () =>
      Unauthorized(
        'This invitation cannot be accepted with its token alone: accept it with an API key of the account it was made for, or ask for a new invitation',
      );
    if (inv.inviteeId !== null) throw refused();
    const result = await this.db.transaction().execute(async (trx) => {
      const taken = await trx.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', inv.email).executeTakeFirst();
      if (taken) throw refused();
      const user = await trx
        .insertInto('users')
        .values({
          id: this.deps.ids('usr'),
          email: inv.email,
          name: name ?? inv.email.split('@')[0]!,
          lastName: null,
          image: null,
          defaultOrganizationId: inv.organizationId,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.join(trx, inv, user.id);
      const apiKey = await this.identity.issueKey(user.id, inv.organizationId, `invitation ${inv.id}`, trx);
      return { userId: user.id, organizationId: inv.organizationId, apiKey };
    });
    await this.deps.onAccessChange();
    return result;
  }

  /** Adds the membership the invitation offers (never platform power) and spends the invitation. */
  private async join(trx: Db, inv: { id: string; organizationId: string; role: 'admin' | 'member' }, userId: string) {
    const member = await trx
      .selectFrom('members')
      .select('id')
      .where('userId', '=', userId)
      .where('organizationId', '=', inv.organizationId)
      .executeTakeFirst();
    if (member) throw Invalid('token', 'already a member of this organization');
    const spent = await trx
      .updateTable('invitations')
      .set({ status: 'accepted' })
      .where('id', '=', inv.id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(spent.numUpdatedRows) !== 1) throw Unauthorized('Invalid or expired invitation token');
    await trx
      .insertInto('members')
      .values({
        id: this.deps.ids('mem'),
        organizationId: inv.organizationId,
        userId,
        role: inv.role,
        permissions: JSON.stringify(defaultPermissions()),
        platformAdmin: false,
      })
      .execute();
  }
}
