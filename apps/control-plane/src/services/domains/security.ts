import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Db, SecurityEntry } from '@skiff/db';
import bcrypt from 'bcryptjs';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import { type ServiceDeps, iso, uniqueAs } from '../shared/deps.js';
import type { ProxyConfig } from './proxy-config.js';
import type { ServiceAccess } from '../shared/service-access.js';

type SecurityRecord = OutputOf<Contracts['security']['one']>;

const BCRYPT_COST = 10;

/** Basic-auth entries in front of an application's domains; passwords kept as bcrypt hashes. */
export class SecurityService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly proxy: ProxyConfig,
  ) {}

  private get db() {
    return this.deps.db;
  }

  private record = (row: SecurityEntry): SecurityRecord => ({
    securityId: row.id,
    applicationId: row.applicationId,
    username: row.username,
    createdAt: iso(row.createdAt),
  });

  async create(p: Principal, input: { applicationId: string; username: string; password: string }) {
    await this.access.find(p, 'application', input.applicationId);
    checkCredentials(input.username, input.password);
    await this.assertUsernameFree(input.applicationId, input.username);
    const passwordHash = await bcrypt.hash(input.password, BCRYPT_COST);
    const row = await this.write(p, input.applicationId, (tx) =>
      tx
        .insertInto('securityEntries')
        .values({ id: this.deps.ids('sec'), applicationId: input.applicationId, username: input.username, passwordHash })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return this.record(row);
  }

  async one(p: Principal, securityId: string) {
    return this.record(await this.find(p, securityId));
  }

  async all(p: Principal, applicationId: string) {
    await this.access.find(p, 'application', applicationId);
    const rows = await this.deps.db.selectFrom('securityEntries').selectAll().where('applicationId', '=', applicationId).orderBy('createdAt').orderBy('id').execute();
    return rows.map((row) => this.record(row));
  }

  async update(p: Principal, input: { securityId: string; username: string; password: string }) {
    const row = await this.find(p, input.securityId);
    checkCredentials(input.username, input.password);
    await this.assertUsernameFree(row.applicationId, input.username, row.id);
    const passwordHash = await bcrypt.hash(input.password, BCRYPT_COST);
    const updated = await this.write(p, row.applicationId, (tx) =>
      tx
        .updateTable('securityEntries')
        .set({ username: input.username, passwordHash })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return this.record(updated);
  }

  async delete(p: Principal, securityId: string) {
    const row = await this.find(p, securityId);
    await this.write(p, row.applicationId, (tx) => tx.deleteFrom('securityEntries').where('id', '=', row.id).returningAll().executeTakeFirstOrThrow());
    return this.record(row);
  }

  /** An entry, reached through its application's organization and access rules. */
  private async find(p: Principal, securityId: string): Promise<SecurityEntry> {
    const row = await this.db.selectFrom('securityEntries').selectAll().where('id', '=', securityId).executeTakeFirst();
    if (!row) throw NotFound('No such security entry');
    await this.access.through(p, 'application', row.applicationId, 'security entry');
    return row;
  }

  private async assertUsernameFree(applicationId: string, username: string, exceptId?: string) {
    let q = this.db.selectFrom('securityEntries').select('id').where('applicationId', '=', applicationId).where('username', '=', username);
    if (exceptId) q = q.where('id', '!=', exceptId);
    if (await q.executeTakeFirst()) throw Invalid('username', `${username} already has an entry on this application`);
  }

  /** Writes the entry and, in the same transaction, the proxy configuration of the servers routing to its application. */
  private write(p: Principal, applicationId: string, run: (tx: Db) => Promise<SecurityEntry>): Promise<SecurityEntry> {
    return this.proxy.change(
      this.db,
      (tx) => this.proxy.serversRoutingTo(tx, { applicationId }),
      (tx) => uniqueAs('username', 'already has an entry on this application', () => run(tx)),
      { field: 'username', organizationId: p.organizationId },
    );
  }
}

/** What basic auth can carry: no `:` in the user name (RFC 7617), nothing bcrypt would cut. */
function checkCredentials(username: string, password: string) {
  if (username.length > 255) throw Invalid('username', 'must be at most 255 characters');
  if (username.includes(':')) throw Invalid('username', 'must not contain : (basic auth separates user and password with it)');
  if (/[\x00-\x1f\x7f]/.test(username)) throw Invalid('username', 'must not contain control characters');
  if (bcrypt.truncates(password)) throw Invalid('password', 'must be at most 72 bytes (bcrypt reads no more)');
}
