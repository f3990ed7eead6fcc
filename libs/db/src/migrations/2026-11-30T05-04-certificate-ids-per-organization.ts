import type { Kysely } from 'kysely';

/**
 * A certificate's id is unique within its organization, not across all of them: a chosen
 * `certificateId` another organization holds is free, so taking one tells nothing of others.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('certificates').dropConstraint('certificates_pkey').execute();
  await db.schema.alterTable('certificates').addPrimaryKeyConstraint('certificates_pkey', ['organization_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('certificates').dropConstraint('certificates_pkey').execute();
  await db.schema.alterTable('certificates').addPrimaryKeyConstraint('certificates_pkey', ['id']).execute();
}
