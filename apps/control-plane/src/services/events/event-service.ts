import type { Contracts, InputOf, OutputOf } from '@skiff/contracts';
import type { EventRecord } from '@skiff/db';
import { canSeeEvent } from '../../authz/policy.js';
import type { Principal } from '../../authz/principal.js';
import type { MetricsTokenService } from '../identity/metrics-tokens.js';
import { iso, type ServiceDeps } from '../shared/deps.js';
import { prunedThrough } from './event-retention.js';
import { type EventSignal, type NewEvent, recordEvent } from './events.js';

const MESSAGE_CAP = 500;

/** Events as API callers meet them: threshold reports, the restart event, delivery records, the stream's reads. */
export class EventService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly metrics: MetricsTokenService,
    private readonly signal: EventSignal,
  ) {}

  /**
   * `notification.receiveNotification`: a monitoring sender's threshold alert, authenticated by
   * the organization's metrics token in the body (any other token: UNAUTHORIZED, nothing
   * stored), recorded as a serverThreshold event of that organization. The token is not kept.
   */
  async receiveThreshold(input: InputOf<Contracts['notification']['receiveNotification']>): Promise<Record<string, never>> {
    const organizationId = await this.metrics.organizationOf(input.Token);
    await this.deps.db.transaction().execute((tx) =>
      recordEvent(tx, {
        organizationId,
        kind: 'serverThreshold',
        outcome: 'failure',
        summary: {
          subject: `${input.Type} on the ${input.ServerType === 'Remote' ? 'remote server' : 'platform host'}`,
          serverType: input.ServerType,
          type: input.Type,
          value: input.Value,
          threshold: input.Threshold,
          message: input.Message.slice(0, MESSAGE_CAP),
          reportedAt: input.Timestamp.slice(0, 64),
        },
      }),
    );
    this.signal.notify();
    return {};
  }

  /**
   * A server's own metrics crossed one of its thresholds, or came back under it (the metrics
   * service's alerts): a serverThreshold event for the server's organization; for the platform
   * host, for the organizations of its platform admins (no other organization is told of it).
   */
  async serverThreshold(serverId: string, kind: string, value: number, threshold: number, state: 'crossed' | 'recovered'): Promise<void> {
    const { owned, organizations } = await this.organizationsOfServer(serverId);
    await this.recordForEach(organizations, {
      kind: 'serverThreshold',
      outcome: state === 'crossed' ? 'failure' : 'success',
      serverId: owned ? serverId : null,
      summary: {
        subject: `${kind} on ${owned ? `server ${serverId}` : 'the platform host'} ${state === 'crossed' ? 'crossed' : 'is back under'} ${threshold} %`,
        serverType: owned ? 'Remote' : 'Platform',
        type: kind,
        value: Math.round(value * 10) / 10,
        threshold,
        state,
      },
    });
  }

  /** A cleanup of a server's engine ran (settings.clean*, or its daily run): a containerCleanup event, to the same organizations as thresholds. */
  async containerCleanup(serverId: string, result: { removedContainers: string[]; removedImages: string[]; removedVolumes: string[]; spaceFreed: number }, trigger: string): Promise<void> {
    const { owned, organizations } = await this.organizationsOfServer(serverId);
    await this.recordForEach(organizations, {
      kind: 'containerCleanup',
      outcome: 'success',
      serverId: owned ? serverId : null,
      summary: {
        subject: `${trigger === 'daily' ? 'daily cleanup' : trigger} on ${owned ? `server ${serverId}` : 'the platform host'}`,
        trigger,
        removedContainers: result.removedContainers.length,
        removedImages: result.removedImages.length,
        removedVolumes: result.removedVolumes.length,
        spaceFreed: result.spaceFreed,
      },
    });
  }

  /** A server's own organization; for the platform host (no record), the organizations of its platform admins. */
  private async organizationsOfServer(serverId: string): Promise<{ owned: boolean; organizations: string[] }> {
    const db = this.deps.db;
    const owner = await db.selectFrom('servers').select('organizationId').where('id', '=', serverId).executeTakeFirst();
    if (owner) return { owned: true, organizations: [owner.organizationId] };
    const admins = await db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.userId')
      .select('members.organizationId')
      .where('users.isPlatformAdmin', '=', true)
      .distinct()
      .execute();
    return { owned: false, organizations: admins.map((r) => r.organizationId) };
  }

  private async recordForEach(organizations: string[], event: Omit<NewEvent, 'organizationId'>): Promise<void> {
    if (organizations.length === 0) return;
    await this.deps.db.transaction().execute(async (tx) => {
      for (const organizationId of organizations) await recordEvent(tx, { ...event, organizationId });
    });
    this.signal.notify();
  }

  /**
   * The control plane started again (not its first boot): one platformRestart event per
   * organization, so each organization's subscribed channels and admins' streams hear of it.
   */
  async platformRestarted(version: string): Promise<number> {
    const orgs = await this.deps.db.selectFrom('organizations').select('id').execute();
    await this.deps.db.transaction().execute(async (tx) => {
      for (const org of orgs) {
        await recordEvent(tx, { organizationId: org.id, kind: 'platformRestart', outcome: 'info', summary: { subject: 'control plane', version } });
      }
    });
    this.signal.notify();
    return orgs.length;
  }

  async deliveries(p: Principal, input: InputOf<Contracts['notification']['deliveries']>): Promise<OutputOf<Contracts['notification']['deliveries']>> {
    let q = this.deps.db
      .selectFrom('eventDeliveries as d')
      .innerJoin('events as e', 'e.id', 'd.eventId')
      .select(['d.id', 'd.notificationId', 'd.eventId', 'e.kind', 'd.status', 'd.attempts', 'd.nextAttemptAt', 'd.lastError', 'd.createdAt', 'd.deliveredAt'])
      .where('d.organizationId', '=', p.organizationId);
    if (input.notificationId) q = q.where('d.notificationId', '=', input.notificationId);
    if (input.status) q = q.where('d.status', '=', input.status);
    const rows = await q.orderBy('d.createdAt', 'desc').orderBy('d.eventId', 'desc').limit(input.limit ?? 50).execute();
    return {
      items: rows.map((r) => ({
        deliveryId: r.id,
        notificationId: r.notificationId,
        eventId: String(r.eventId),
        eventKind: r.kind,
        status: r.status,
        attempts: r.attempts,
        nextAttemptAt: r.status === 'pending' ? iso(r.nextAttemptAt) : null,
        lastError: r.lastError,
        createdAt: iso(r.createdAt),
        deliveredAt: r.deliveredAt ? iso(r.deliveredAt) : null,
      })),
    };
  }

  /** The newest event id of the organization (a stream without Last-Event-ID starts after it). */
  async latestId(organizationId: string): Promise<string> {
    const row = await this.deps.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).where('organizationId', '=', organizationId).executeTakeFirst();
    return row?.id == null ? '0' : String(row.id);
  }

  /**
   * When a stream resumes after `afterId`: whether retention deleted events of the
   * organization after it (the stream then starts with the oldest kept), with the newest
   * deleted id and the oldest kept one (null: none kept).
   */
  async resumeGap(organizationId: string, afterId: string): Promise<{ prunedThrough: string; oldestKept: string | null } | null> {
    const through = await prunedThrough(this.deps.db, organizationId);
    if (through === null || BigInt(afterId) >= BigInt(through)) return null;
    const oldest = await this.deps.db.selectFrom('events').select((eb) => eb.fn.min('id').as('id')).where('organizationId', '=', organizationId).executeTakeFirst();
    return { prunedThrough: through, oldestKept: oldest?.id == null ? null : String(oldest.id) };
  }

  /**
   * Events of the caller's organization after `afterId`, oldest first, at most `limit` read
   * (the caller pages on with the last id read, `next`), as far back as retention keeps them;
   * only those the caller may see are in `events`.
   */
  async after(p: Principal, afterId: string, limit = 200): Promise<{ events: EventRecord[]; next: string; read: number }> {
    const rows = await this.deps.db
      .selectFrom('events')
      .selectAll()
      .where('organizationId', '=', p.organizationId)
      .where('id', '>', afterId as never)
      .orderBy('id')
      .limit(limit)
      .execute();
    const next = rows.length > 0 ? String(rows[rows.length - 1]!.id) : afterId;
    return { events: rows.map((r) => ({ ...r, id: String(r.id) })).filter((e) => canSeeEvent(p, e)), next, read: rows.length };
  }
}

/** The event as the stream's `data:` carries it. */
export const eventJson = (e: EventRecord) => ({
  eventId: e.id,
  organizationId: e.organizationId,
  kind: e.kind,
  outcome: e.outcome,
  workload: e.workloadId ? { kind: e.workloadKind, id: e.workloadId, name: e.workloadName } : null,
  projectId: e.projectId,
  environmentId: e.environmentId,
  serverId: e.serverId,
  summary: e.summary,
  occurredAt: iso(e.occurredAt),
});
