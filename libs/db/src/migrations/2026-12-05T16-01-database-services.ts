import { type Kysely, sql } from 'kysely';

const CLUSTER = [
  'health_check_cluster', 'restart_policy_cluster', 'placement_cluster', 'update_config_cluster',
  'rollback_config_cluster', 'mode_cluster', 'labels_cluster', 'network_cluster',
  'stop_grace_period_cluster', 'endpoint_spec_cluster', 'ulimits_cluster',
];
const TARGETS = ['db_a_id', 'db_b_id', 'db_c_id', 'db_d_id', 'db_e_id'];

/**
 * Database services (issue 18): one table for the five engines (`engine`: postgres, mariadb,
 * mysql, mongo, libsql), shaped like cache_instances. Backups' `db_X_id` columns now point
 * at it instead of applications; the backups that named an application are removed (they
 * were records only: no backup ever ran, and an application is no database service).
 */
export async function up(db: Kysely<any>): Promise<void> {
  let t = db.schema
    .createTable('database_services')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('app_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('server_id', 'text', (c) => c.references('servers.id').modifyEnd(sql`deferrable initially deferred`))
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('application_status', 'text', (c) => c.notNull().defaultTo('idle'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('engine', 'text', (c) => c.notNull())
    .addColumn('container_image', 'text', (c) => c.notNull())
    .addColumn('database_name', 'text')
    .addColumn('database_user', 'text')
    .addColumn('database_password', 'text', (c) => c.notNull())
    .addColumn('root_password', 'text')
    .addColumn('replica_set', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('command', 'text')
    .addColumn('args', 'jsonb')
    .addColumn('external_port', 'integer')
    .addColumn('network_ids', 'jsonb')
    .addColumn('detach_platform_network', 'boolean')
    .addColumn('replicas', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('deploy_count', 'integer', (c) => c.notNull().defaultTo(0));
  for (const column of ['memory_reservation', 'memory_limit', 'cpu_reservation', 'cpu_limit']) t = t.addColumn(column, 'text');
  for (const column of CLUSTER) t = t.addColumn(column, 'jsonb');
  await t.execute();
  await db.schema.createIndex('database_services_environment').on('database_services').column('environment_id').execute();
  await sql`create unique index database_services_server_app_name on database_services (coalesce(server_id, ''), app_name)`.execute(db);
  await sql`create unique index database_services_server_external_port on database_services (coalesce(server_id, ''), external_port) where external_port is not null`.execute(
    db,
  );

  await sql`delete from backups where ${sql.join(TARGETS.map((c) => sql`${sql.ref(c)} is not null`), sql` or `)}`.execute(db);
  for (const column of TARGETS) {
    await sql`alter table backups drop constraint if exists ${sql.raw(`backups_${column}_fkey`)}`.execute(db);
    await sql`alter table backups add constraint ${sql.raw(`backups_${column}_fkey`)} foreign key (${sql.ref(column)}) references database_services (id) on delete cascade`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from backups where ${sql.join(TARGETS.map((c) => sql`${sql.ref(c)} is not null`), sql` or `)}`.execute(db);
  for (const column of TARGETS) {
    await sql`alter table backups drop constraint if exists ${sql.raw(`backups_${column}_fkey`)}`.execute(db);
    await sql`alter table backups add constraint ${sql.raw(`backups_${column}_fkey`)} foreign key (${sql.ref(column)}) references applications (id) on delete cascade`.execute(
      db,
    );
  }
  await db.schema.dropTable('database_services').execute();
}
