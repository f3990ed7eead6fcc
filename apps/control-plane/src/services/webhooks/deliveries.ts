import type { Db, WebhookDecision, WebhookDelivery } from '@skiff/db';
import type { ServiceDeps } from '../shared/deps.js';

/** How long a delivery key is remembered: the same delivery within it is a replay. */
export const REPLAY_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** Deliveries kept per workload (the newest); between prunes at most PRUNE_EVERY more. */
export const KEEP_DELIVERIES = 100;
const PRUNE_EVERY = 10;

export interface DeliveryOutcome {
  workload: { kind: 'application' | 'compose'; id: string };
  source: string;
  deliveryId: string | null;
  event: string;
  ref: string | null;
  commit: string | null;
  decision: WebhookDecision;
  reason: string;
  deploymentId: string | null;
}

/** Received deliveries: the replay guard and the per-workload record of decisions. */
export class WebhookDeliveries {
  constructor(private readonly deps: ServiceDeps) {}

  /** When expired keys were last removed (at most once a minute). */
  private expiredAt = 0;
  /** Records written per workload since its last prune. */
  private readonly sincePrune = new Map<string, number>();

  private get db(): Db {
    return this.deps.db;
  }

  /**
   * Claims the delivery's keys; false when one was already claimed within the window (a
   * replay). Concurrent claims of one key: exactly one wins (the key is the primary key).
   */
  async claim(keys: readonly string[]): Promise<boolean> {
    if (keys.length === 0) return true;
    const now = this.deps.clock();
    if (now.getTime() - this.expiredAt > 60_000) {
      this.expiredAt = now.getTime();
      await this.db.deleteFrom('webhookSeen').where('seenAt', '<', new Date(now.getTime() - REPLAY_WINDOW_MS)).execute();
    }
    // A key older than the window that was not yet removed counts as new.
    const claimed = await this.db
      .insertInto('webhookSeen')
      .values(keys.map((key) => ({ key, seenAt: now })))
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({ seenAt: now }).where('webhookSeen.seenAt', '<', new Date(now.getTime() - REPLAY_WINDOW_MS)),
      )
      .returning('key')
      .execute();
    return claimed.length === keys.length;
  }

  async record(outcome: DeliveryOutcome): Promise<void> {
    const { workload, ...rest } = outcome;
    const column = workload.kind === 'application' ? 'applicationId' : 'composeId';
    await this.db
      .insertInto('webhookDeliveries')
      .values({
        id: this.deps.ids('whd'),
        applicationId: workload.kind === 'application' ? workload.id : null,
        composeId: workload.kind === 'compose' ? workload.id : null,
        ...rest,
        createdAt: this.deps.clock(),
      })
      .execute();
    // Everything past the newest KEEP_DELIVERIES of the workload goes, checked every PRUNE_EVERY records.
    const key = `${workload.kind}:${workload.id}`;
    const since = (this.sincePrune.get(key) ?? PRUNE_EVERY) + 1;
    if (since < PRUNE_EVERY) {
      this.sincePrune.set(key, since);
      return;
    }
    this.sincePrune.set(key, 0);
    await this.db
      .deleteFrom('webhookDeliveries')
      .where(column, '=', workload.id)
      .where('id', 'not in', (q) =>
        q.selectFrom('webhookDeliveries').select('id').where(column, '=', workload.id).orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(KEEP_DELIVERIES),
      )
      .execute();
  }

  /** A workload's deliveries, newest first. */
  /** A deploy queued for a delivery did not start (its forge login, a setting): its records say why. */
  async refused(deploymentId: string, reason: string): Promise<void> {
    await this.deps.db
      .updateTable('webhookDeliveries')
      .set({ decision: 'refused', reason: `refused: ${reason}`.slice(0, 2000) })
      .where('deploymentId', '=', deploymentId)
      .execute();
  }

  async of(kind: 'application' | 'compose', id: string): Promise<WebhookDelivery[]> {
    return this.db
      .selectFrom('webhookDeliveries')
      .selectAll()
      .where(kind === 'application' ? 'applicationId' : 'composeId', '=', id)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .limit(KEEP_DELIVERIES)
      .execute();
  }
}
