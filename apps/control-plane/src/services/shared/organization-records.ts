import type { Database, Db } from '@skiff/db';
import type { Selectable } from 'kysely';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';

/** Tables whose rows belong directly to an organization. */
export type OrganizationTable = 'aiConfigs' | 'destinations' | 'backups' | 'servers' | 'sshKeys' | 'notifications' | 'certificates';

type Row<T extends OrganizationTable> = Selectable<Database[T]>;

/** A row of the caller's organization; another organization's is as missing as none (NOT_FOUND). */
export async function findOfOrganization<T extends OrganizationTable>(db: Db, table: T, p: Principal, id: string, what: string): Promise<Row<T>> {
  // By id within the organization: certificate ids are unique per organization only.
  const row = (await db.selectFrom(table as 'servers').selectAll().where('id', '=', id).where('organizationId', '=', p.organizationId).executeTakeFirst()) as Row<T> | undefined;
  if (!row) throw NotFound(`No such ${what}`);
  return row;
}

/** The caller's organization's rows, oldest first. */
export async function allOfOrganization<T extends OrganizationTable>(db: Db, table: T, p: Principal): Promise<Row<T>[]> {
  return (await db
    .selectFrom(table as 'servers')
    .selectAll()
    .where('organizationId', '=', p.organizationId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute()) as Row<T>[];
}

/** A lookup for an id given in another record's input: NOT_FOUND becomes bad input naming the field. */
export async function asReference<R>(field: string, message: string, lookup: () => Promise<R>): Promise<R> {
  try {
    return await lookup();
  } catch (err) {
    if ((err as { code?: string }).code === 'NOT_FOUND') throw Invalid(field, message);
    throw err;
  }
}
