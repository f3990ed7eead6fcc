import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Db } from '@skiff/db';
import { COMMAND_STREAM, commandConsumer } from '@skiff/domain';
import { sql } from 'kysely';
import type { CommandScope } from './command-records.js';

/**
 * Work an agent never received is settled in Postgres alone (issue 14): a published command
 * whose every copy is still in the command stream, undelivered, is deleted from the stream
 * and ended here, as a command still in the outbox is.
 */
export interface CommandStream {
  /** Whether commands can be withdrawn at all (false without NATS). */
  readonly available: boolean;
  /**
   * Deletes the copies at `seqs` of a command for `serverId` from the stream; true only when
   * every copy was there and its agent's consumer never delivered one. False: the agent may
   * hold it (some copies may be gone from the stream then: the agent has one, its journal
   * keeps it, and the relay publishes one again while no result comes).
   */
  withdraw(serverId: string, seqs: number[]): Promise<boolean>;
}

/**
 * Why a withdrawal never lets a command run after it was ended here:
 * - a work-queue message leaves the stream only when its agent acknowledged it (after
 *   journaling it) or when it is deleted: a copy not found may be in the agent's hands;
 * - the consumer delivers a server's messages in stream order, so one at a sequence above
 *   its last delivered sequence (read after the delete) was never delivered, and once
 *   deleted it never will be;
 * - the caller holds the command's row (FOR UPDATE) from before the first delete until the
 *   command is ended: the relay, which holds the row while it publishes and records each
 *   copy's sequence, can neither add a copy meanwhile nor publish it again afterwards;
 * - a publish whose acknowledgement was lost records sequence 0: such a command is never
 *   withdrawn (a copy of unknown sequence may be delivered).
 */
export class JetStreamCommands implements CommandStream {
  readonly available = true;

  constructor(
    private readonly connection: () => Promise<NatsConnection>,
    private readonly timeoutMs = 5_000,
  ) {}

  async withdraw(serverId: string, seqs: number[]): Promise<boolean> {
    if (seqs.length === 0 || seqs.some((s) => !(s > 0))) return false;
    // NATS away: nothing can be withdrawn (the caller answers as it would without this).
    const nc = await Promise.race([this.connection(), new Promise<null>((resolve) => setTimeout(() => resolve(null), this.timeoutMs).unref())]).catch(() => null);
    if (!nc) return false;
    const jsm = await jetstreamManager(nc, { timeout: this.timeoutMs });
    const first = Math.min(...seqs);
    // Delivered already: nothing is deleted.
    if ((await this.lastDelivered(jsm, serverId)) >= first) return false;
    for (const seq of seqs) {
      try {
        if (!(await jsm.streams.deleteMessage(COMMAND_STREAM, seq, false))) return false;
      } catch (err) {
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound) return false;
        throw err;
      }
    }
    // The agent may have fetched one between the first look and its delete.
    return (await this.lastDelivered(jsm, serverId)) < first;
  }

  /** The stream sequence the server's consumer delivered last (0: none, or no consumer yet). */
  private async lastDelivered(jsm: Awaited<ReturnType<typeof jetstreamManager>>, serverId: string): Promise<number> {
    try {
      return (await jsm.consumers.info(COMMAND_STREAM, commandConsumer(serverId))).delivered.stream_seq;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound) return 0;
      throw err;
    }
  }
}

/**
 * Adds a copy's stream sequence to the command (once: a re-publish within the duplicate
 * window answers the first copy's); 0 for a copy that may exist with a sequence unknown.
 */
export async function recordStreamSeq(tx: Db, commandId: string, seq: number): Promise<void> {
  await sql`update commands set stream_seqs = array_append(stream_seqs, ${String(seq)}::bigint) where id = ${commandId} and not (${String(seq)}::bigint = any(stream_seqs))`.execute(
    tx,
  );
}

/** Without NATS nothing was published, and nothing can be withdrawn. */
export const NO_COMMAND_STREAM: CommandStream = { available: false, withdraw: async () => false };

/**
 * Inside a transaction: ends a published command of `scope` that its agent never received
 * (failed with the reason, marked never received), after withdrawing it from the stream.
 * Answers its deployment id (null when none), or undefined when it was not ended (not
 * published, or the agent may hold it). The row stays locked while the stream is asked.
 */
export async function withdrawUnreceived(
  tx: Db,
  stream: CommandStream,
  id: string,
  scope: CommandScope,
  reason: string,
  at: Date,
): Promise<{ deploymentId: string | null } | undefined> {
  if (!stream.available) return undefined;
  const c = await tx
    .selectFrom('commands')
    .select(['id', 'deploymentId', 'streamSeqs'])
    .where('id', '=', id)
    .where('workloadKey', '=', scope.workloadKey)
    .where('serverId', '=', scope.serverId)
    .where('status', '=', 'published')
    .forUpdate()
    .executeTakeFirst();
  if (!c) return undefined;
  // A failure part way (copies deleted, the consumer not asked again) leaves the command
  // published: the relay publishes it again while no result comes, and the agent's journal
  // keeps a second copy from running twice.
  const withdrawn = await stream.withdraw(scope.serverId, c.streamSeqs.map(Number)).catch(() => false);
  if (!withdrawn) return undefined;
  await tx.updateTable('commands').set({ status: 'failed', finishedAt: at, resultReason: reason, neverReceived: true }).where('id', '=', id).execute();
  return { deploymentId: c.deploymentId };
}
