import type { Kysely } from 'kysely';

/**
 * The host ports a compose stack's file published when it was last deployed (as its agent read
 * it: a git source's file is known to the agent only), JSON `[{first, last, protocol}]`; null:
 * never deployed by an agent that reports them. Taken for the stack by the other workloads'
 * port checks (published-ports.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('compose_stacks').addColumn('deployed_host_ports', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('compose_stacks').dropColumn('deployed_host_ports').execute();
}
