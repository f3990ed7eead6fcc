import type { Kysely } from 'kysely';

/**
 * `organizations.trusted_on_platform_host`: a platform administrator lets the organization's
 * compose stacks use host privileges (privileged, host namespaces, host paths, the Docker
 * socket…) on the platform host, which every organization shares. False for all until then.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('organizations')
    .addColumn('trusted_on_platform_host', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organizations').dropColumn('trusted_on_platform_host').execute();
}
