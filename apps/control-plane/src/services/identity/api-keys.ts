import type { ApiKeyScopeJson, Db } from '@skiff/db';
import type { Logger } from 'pino';
import { canSeeProject, canSeeServer, isAdmin, isLimited } from '../../authz/policy.js';
import type { Principal } from '../../authz/principal.js';
import { storedPermissions } from '../../authz/principal.js';
import { DomainError, Forbidden, Invalid, NotFound } from '../../errors.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import { compiledOnce } from '../shared/compiled-once.js';
import { type IdentityService, apiKeyRecord } from './identity.js';

export interface NewKeyInput {
  name: string;
  organizationId?: string;
  expiresAt?: string;
  scope?: { readOnly?: boolean; projectIds?: string[]; serverIds?: string[] };
}

/** A refusal of a scope wider than its creator may reach, naming the field. */
const tooWide = (field: string, message: string) => new DomainError('FORBIDDEN', `${field}: ${message}`, [{ path: field.split('.'), message }]);
/** Bad input in a nested field, its path as the contract's own issues give it. */
const invalidAt = (field: string, message: string) =>
  new DomainError('BAD_REQUEST', `Invalid input data: ${field}: ${message}`, [{ path: field.split('.'), message }]);

/** API keys people hand out: their scope and expiry, checked against the creator's own access; listing and removal. */
export class ApiKeyService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly identity: IdentityService,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** A key of the caller's own user, in an organization the user belongs to, no wider than the caller. */
  async create(p: Principal, input: NewKeyInput) {
    const organizationId = input.organizationId ?? p.organizationId;
    const membership = await this.identity.membership(p.userId, organizationId);
    if (!membership) throw Invalid('metadata.organizationId', 'you are not a member of this organization');
    if (organizationId !== p.organizationId && (p.scope || p.expiresAt)) {
      throw tooWide('metadata.organizationId', 'a key with a scope or an expiry makes keys of its own organization only');
    }
    // In another organization the user acts with that membership, through no key's limits.
    const creator: Principal =
      organizationId === p.organizationId
        ? p
        : { ...p, organizationId, role: membership.role, permissions: storedPermissions(membership.permissions), scope: null, expiresAt: null };
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    const scope = input.scope ? await this.checkScope(creator, input.scope) : null;
    this.checkWithin(creator, scope, expiresAt);
    return this.identity.issueKey(p.userId, organizationId, input.name, this.db, { scope, expiresAt });
  }

  /** The ids of a new scope: records of the organization (BAD_REQUEST otherwise) that the creator may reach (FORBIDDEN otherwise). */
  private async checkScope(creator: Principal, given: NonNullable<NewKeyInput['scope']>): Promise<ApiKeyScopeJson> {
    const scope: ApiKeyScopeJson = {
      readOnly: given.readOnly ?? false,
      projectIds: given.projectIds ? [...new Set(given.projectIds)] : null,
      serverIds: given.serverIds ? [...new Set(given.serverIds)] : null,
    };
    const known = async (table: 'projects' | 'servers', ids: string[]) =>
      new Set((await this.db.selectFrom(table).select('id').where('organizationId', '=', creator.organizationId).where('id', 'in', ids).execute()).map((r) => r.id));
    const check = async (field: string, table: 'projects' | 'servers', ids: string[] | null, reach: (id: string) => boolean) => {
      if (!ids) return;
      const found = await known(table, ids);
      const unknown = ids.filter((id) => !found.has(id));
      if (unknown.length) throw invalidAt(field, `unknown in this organization: ${unknown.join(', ')}`);
      const denied = ids.filter((id) => !reach(id));
      if (denied.length) throw tooWide(field, `beyond your own access: ${denied.join(', ')}`);
    };
    await check('scope.projectIds', 'projects', scope.projectIds, (id) => canSeeProject(creator, id));
    await check('scope.serverIds', 'servers', scope.serverIds, (id) => canSeeServer(creator, id));
    return scope;
  }

  /** A key made (or removed) through a key with limits must be at least as narrow: its lists, read-only flag and expiry. */
  private checkWithin(creator: Principal, scope: ApiKeyScopeJson | null, expiresAt: Date | null): void {
    if (expiresAt && expiresAt.getTime() <= this.deps.clock().getTime()) throw Invalid('expiresAt', 'must be in the future');
    const own = creator.scope;
    if (own?.projectIds && !scope?.projectIds) throw tooWide('scope.projectIds', 'required: this API key is limited to named projects');
    if (own?.serverIds && !scope?.serverIds) throw tooWide('scope.serverIds', 'required: this API key is limited to named servers');
    if (own?.readOnly && !scope?.readOnly) throw tooWide('scope.readOnly', 'required: this API key is read-only');
    if (creator.expiresAt && (!expiresAt || expiresAt > creator.expiresAt)) {
      throw tooWide('expiresAt', `required, and no later than this API key's own expiry (${iso(creator.expiresAt)})`);
    }
  }

  /** The caller's keys in the current organization; an admin's list has every member's. */
  async list(p: Principal) {
    let q = this.db.selectFrom('apiKeys').selectAll().where('organizationId', '=', p.organizationId);
    if (!isAdmin(p)) q = q.where('userId', '=', p.userId);
    const rows = await q.orderBy('createdAt').orderBy('id').execute();
    return rows.map(apiKeyRecord);
  }

  /** Your own keys (through a limited key: those within its limits, or itself); an admin any of the organization. */
  async delete(p: Principal, apiKeyId: string) {
    const row = await this.db.selectFrom('apiKeys').selectAll().where('id', '=', apiKeyId).executeTakeFirst();
    if (!row) throw NotFound('No such API key');
    if (row.userId !== p.userId) {
      if (row.organizationId !== p.organizationId) throw NotFound('No such API key');
      if (!isAdmin(p)) throw Forbidden('Only admins can delete the keys of other members');
    } else if (row.id !== p.apiKeyId && (isLimited(p) || p.expiresAt)) {
      if (row.organizationId !== p.organizationId) throw Forbidden('This API key may delete keys of its own organization only');
      try {
        this.checkWithin({ ...p, expiresAt: p.expiresAt }, row.scope, row.expiresAt ?? null);
      } catch {
        throw Forbidden('This API key may only delete keys within its own scope and expiry');
      }
    }
    await this.db.deleteFrom('apiKeys').where('id', '=', apiKeyId).execute();
    await this.deps.onAccessChange();
    return apiKeyRecord(row);
  }
}

const markUsed = compiledOnce(['apiKeyId', 'at'], (db: Db, slot) => db.updateTable('apiKeys').set({ lastUsedAt: slot.at as unknown as Date }).where('id', '=', slot.apiKeyId));

/**
 * Records when keys are used, at most once a minute per key (and per control plane), in the
 * background of the request: a key in use costs one UPDATE a minute, not one per request.
 */
export class KeyUsage {
  private readonly writtenAt = new Map<string, number>();

  constructor(
    private readonly deps: Pick<ServiceDeps, 'db' | 'clock'>,
    private readonly log: Logger,
    private readonly everyMs = 60_000,
  ) {}

  seen(apiKeyId: string): void {
    const now = this.deps.clock();
    const last = this.writtenAt.get(apiKeyId);
    if (last !== undefined && now.getTime() - last < this.everyMs) return;
    if (this.writtenAt.size > 10_000) this.writtenAt.clear();
    this.writtenAt.set(apiKeyId, now.getTime());
    markUsed(this.deps.db, { apiKeyId, at: now })
      .catch((err: unknown) => this.log.warn({ err: (err as Error).message, apiKeyId }, 'could not record when an API key was used'));
  }
}
