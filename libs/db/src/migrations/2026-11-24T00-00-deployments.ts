import { type Kysely, sql } from 'kysely';

const now = sql`now()`;

/**
 * Deployments (one record per deploy of a workload, with its capped log) and the command
 * outbox (ARCHITECTURE.md "Commands"): a command row is written in the same transaction as
 * the domain change it carries out, and the relay publishes it to the server's agent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('deployments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    // The server id on the agent channel: a server record's id, or 'local' for the platform host.
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('queued').check(sql`status in ('queued', 'running', 'done', 'error', 'cancelled')`),
    )
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    // The newest lines only: the control plane keeps the tail when a log grows past its cap.
    .addColumn('log', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('reason', 'text')
    // The highest event sequence applied; events at or below it are duplicates.
    .addColumn('last_sequence', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('deployments_application').on('deployments').columns(['application_id', 'created_at']).execute();

  await db.schema
    .createTable('commands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Creation order for the relay (created_at can tie within one clock tick).
    .addColumn('position', 'bigint', (c) => c.generatedAlwaysAsIdentity())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('workload_key', 'text', (c) => c.notNull())
    .addColumn('deployment_id', 'text', (c) => c.references('deployments.id').onDelete('set null'))
    // The binary Command, base64, sealed with the platform key (it carries env values).
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`status in ('pending', 'published', 'done', 'failed')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deadline', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('published_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('result_reason', 'text')
    .execute();
  // What the relay scans: unfinished commands, in creation order.
  await sql`create index commands_unfinished on commands (position) where status in ('pending', 'published')`.execute(db);
  await db.schema.createIndex('commands_deployment').on('commands').column('deployment_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('commands').execute();
  await db.schema.dropTable('deployments').execute();
}
