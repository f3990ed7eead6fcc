import { type Kysely, sql } from 'kysely';

/**
 * `application_mounts` (issue 18, section 2): what an application's tasks mount. `type` is
 * `volume` (a named volume, `volume_name`), `bind` (a host path, `host_path`) or `file` (text
 * the agent writes under the application's folder, at `file_path`, and bind-mounts read-only;
 * `content` is sealed when `secret`). Each `mount_path` is used once per application.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('application_mounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('volume_name', 'text')
    .addColumn('host_path', 'text')
    .addColumn('file_path', 'text')
    .addColumn('content', 'text')
    .addColumn('secret', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('mount_path', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('application_mounts_target', ['application_id', 'mount_path'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('application_mounts').execute();
}
