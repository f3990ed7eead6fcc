import { type Kysely, sql } from 'kysely';

/**
 * Archives uploaded for `drop` applications (`application.dropDeployment`). The file lives
 * in the control plane's data directory under `archives/<id>`; the row says what it is. A
 * file without a row is garbage and is removed by the archive sweep.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('application_archives')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('format', 'text', (c) => c.notNull().check(sql`format in ('zip', 'tar.gz')`))
    // Bytes of the archive as uploaded.
    .addColumn('size', 'bigint', (c) => c.notNull())
    // SHA-256 of the archive as uploaded, lowercase hex.
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('application_archives_application')
    .on('application_archives')
    .columns(['application_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('application_archives').execute();
}
