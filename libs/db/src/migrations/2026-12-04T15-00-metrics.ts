import { type Kysely, sql } from 'kysely';

/**
 * Metrics (issue 17, section 3): the agents' host and container samples, at full resolution
 * (`resolution` 0, kept a day) and as 5-minute averages and maxima (`resolution` 300, kept 30
 * days); and each server's alert thresholds (server id `local`: the platform host).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('host_metrics')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('resolution', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('cpu_percent', 'double precision', (c) => c.notNull())
    .addColumn('cpu_max', 'double precision', (c) => c.notNull())
    .addColumn('memory_used', 'double precision', (c) => c.notNull())
    .addColumn('memory_max', 'double precision', (c) => c.notNull())
    .addColumn('memory_total', 'double precision', (c) => c.notNull())
    .addColumn('disk_used', 'double precision', (c) => c.notNull())
    .addColumn('disk_total', 'double precision', (c) => c.notNull())
    .addColumn('network_rx', 'double precision', (c) => c.notNull())
    .addColumn('network_tx', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('host_metrics_pkey', ['server_id', 'resolution', 'at'])
    .execute();
  await db.schema
    .createTable('container_metrics')
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('resolution', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('container_name', 'text', (c) => c.notNull())
    .addColumn('app_name', 'text', (c) => c.notNull())
    .addColumn('workload_id', 'text', (c) => c.notNull())
    .addColumn('cpu_percent', 'double precision', (c) => c.notNull())
    .addColumn('cpu_max', 'double precision', (c) => c.notNull())
    .addColumn('memory_used', 'double precision', (c) => c.notNull())
    .addColumn('memory_max', 'double precision', (c) => c.notNull())
    .addColumn('memory_limit', 'double precision', (c) => c.notNull())
    .addColumn('network_rx', 'double precision', (c) => c.notNull())
    .addColumn('network_tx', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('container_metrics_pkey', ['server_id', 'resolution', 'container_name', 'at'])
    .execute();
  await db.schema.createIndex('container_metrics_app').on('container_metrics').columns(['server_id', 'app_name', 'resolution', 'at']).execute();
  await db.schema
    .createTable('server_metric_thresholds')
    .addColumn('server_id', 'text', (c) => c.primaryKey())
    .addColumn('cpu_percent', 'double precision')
    .addColumn('memory_percent', 'double precision')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('server_metric_thresholds').execute();
  await db.schema.dropTable('container_metrics').execute();
  await db.schema.dropTable('host_metrics').execute();
}
