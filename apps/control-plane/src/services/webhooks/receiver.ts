import { createHash } from 'node:crypto';
import type { ForgeKind } from '@skiff/db';
import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import { webhookPrincipal } from './principal.js';
import type { PreviewHooks } from './previews.js';
import { DomainError, NotFound, Unauthorized } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { decidePush } from './decide.js';
import type { DeliveryOutcome, WebhookDeliveries } from './deliveries.js';
import { DELIVERY_HEADER, EVENT_HEADER, type ForgeEvent, readForgeEvent, readGenericEvent } from './payloads.js';
import { type ForgeSource, SIGNATURE_HEADER, sameSecret, verifySignature } from './signatures.js';
import { type WebhookWorkload, type WorkloadKind, buildsRepository, deploySettingsOf, organizationOf, workloadById, workloadsOfForge } from './workloads.js';

/**
 * Queues a deploy of one workload, acting as `p`; answers the deployment id, and `start` when
 * the deploy's own work (a forge login) is left for after the answer: the receiver calls it
 * once the delivery is recorded, and does not wait for it.
 */
export interface WorkloadDeployer {
  deploy(p: Principal, w: WebhookWorkload, title: string): Promise<QueuedDeploy>;
}

export interface QueuedDeploy {
  deploymentId: string;
  start?: () => Promise<void>;
}

/** What the routes pass in: the raw body (signatures cover its bytes) and the headers. */
export interface WebhookRequest {
  body: string;
  header: (name: string) => string | undefined;
}

export interface WebhookAnswer {
  /** Per workload the delivery reached: its decision and reason. */
  results: Array<{ kind: WorkloadKind; id: string; decision: string; reason: string; deploymentId: string | null }>;
  replay?: boolean;
}

export const FORGE_OF: Record<ForgeSource, ForgeKind> = { github: 'forgeA', gitlab: 'forgeB', bitbucket: 'forgeC', gitea: 'forgeD' };

/**
 * Push-to-deploy. A delivery is authenticated, claimed per workload (a delivery a workload
 * received within the replay window is ignored for it), decided per workload it reaches, recorded, and its deploys queued on the
 * deployment queue; nothing is cloned or built while the sender waits.
 *
 * Secrets: GitHub deliveries are signed with the GitHub App's webhook secret (`webhookSecret`
 * of the forgeA connection: an App has one webhook for all its installations); GitLab, Gitea and
 * Bitbucket hooks are set per repository and carry the workload's `refreshToken` as their secret
 * (their connections have no webhook secret). The generic route takes the token in its URL.
 */
export class WebhookReceiver {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly deliveries: WebhookDeliveries,
    private readonly deployer: WorkloadDeployer,
    private readonly log: Logger,
    private readonly previews?: PreviewHooks,
  ) {}

  /** Deploys being queued, per workload (`kind:id`). */
  private readonly pending = new Map<string, Promise<QueuedDeploy & { joined: boolean }>>();

  private get db() {
    return this.deps.db;
  }

  /** `POST /webhooks/<forge>`. UNAUTHORIZED when no connection or workload secret verifies the delivery. */
  async forge(source: ForgeSource, req: WebhookRequest): Promise<WebhookAnswer> {
    const kind = FORGE_OF[source];
    const eventName = req.header(EVENT_HEADER[source]) ?? '';
    const body = parseJson(req.body);
    const event = readForgeEvent(source, eventName, body);
    const candidates = (await workloadsOfForge(this.db, kind)).filter((w) => buildsRepository(kind, w.row, event));
    const signature = req.header(SIGNATURE_HEADER[source]);
    let verified: WebhookWorkload[];
    if (source === 'github') {
      const connections = await this.githubConnectionsVerifying(req.body, signature);
      if (connections.size === 0) throw Unauthorized('The signature does not match');
      verified = candidates.filter((w) => w.row.forgeAId !== null && connections.has(w.row.forgeAId));
    } else {
      verified = candidates.filter((w) => w.row.refreshToken !== null && verifySignature(source, this.deps.secrets.open(w.row.refreshToken), req.body, signature));
      if (verified.length === 0) throw Unauthorized('The signature does not match');
    }
    const deliveryId = req.header(DELIVERY_HEADER[source])?.slice(0, 200) ?? null;
    const digest = createHash('sha256').update(req.body).digest('hex');
    // A delivery id is not covered by the signature: the body's digest is claimed too, so a
    // captured delivery resent under a new id is still a replay.
    const keys = [`${source}:body:${digest}`, ...(deliveryId ? [`${source}:id:${deliveryId}`] : [])];
    return this.handle(source, verified, event, deliveryId, keys);
  }

  /**
   * `POST /webhooks/deploy/<kind>/<id>/<token>`: plain git sources and registries. An unknown
   * workload and a wrong token answer the same NOT_FOUND (a caller learns nothing from it).
   */
  async generic(kind: WorkloadKind, id: string, token: string, req: WebhookRequest): Promise<WebhookAnswer> {
    // An id PostgreSQL cannot hold (U+0000, a lone surrogate) names no workload.
    const workload = storable(id) ? await workloadById(this.db, kind, id) : null;
    const expected = workload?.row.refreshToken ? this.deps.secrets.open(workload.row.refreshToken) : '';
    // Compared even when there is no workload, so both answers take the same time.
    const matches = sameSecret(token, expected || 'no-token');
    if (!workload || !expected || !matches) throw NotFound('No such webhook');
    const event = req.body.trim() === '' ? readGenericEvent({}) : readGenericEvent(parseJson(req.body));
    const deliveryId = (req.header('x-github-delivery') ?? req.header('x-gitea-delivery') ?? req.header('x-gitlab-event-uuid') ?? req.header('x-request-uuid'))?.slice(0, 200) ?? null;
    // Without a delivery id every call counts (a registry or a script may call twice on purpose).
    const keys = deliveryId ? [`token:${deliveryId}`] : [];
    return this.handle('token', [workload], event, deliveryId, keys);
  }

  /**
   * `keys` name the delivery; each workload claims them for itself (`<kind>:<id>:<key>`), so a
   * delivery is a replay only for a workload that already received it, never because another
   * organization's workload did.
   */
  private async handle(source: string, workloads: WebhookWorkload[], event: ForgeEvent, deliveryId: string | null, keys: string[]): Promise<WebhookAnswer> {
    const results: WebhookAnswer['results'] = [];
    let replays = 0;
    for (const w of workloads) {
      const fresh = await this.deliveries.claim(keys.map((key) => `${w.kind}:${w.row.id}:${key}`));
      if (!fresh) replays += 1;
      const outcome = !fresh
        ? null
        : event.kind === 'pull_request' && this.previews
          ? await this.previews.handle(source, w, event)
          : await this.decideAndQueue(w, event);
      const { start, ...recorded } = outcome ?? { decision: 'ignored' as const, reason: 'ignored: replay of a delivery already received', deploymentId: null, start: undefined };
      const record: DeliveryOutcome = {
        workload: { kind: w.kind, id: w.row.id },
        source,
        deliveryId,
        event: (event.event || event.kind).slice(0, 100),
        ref: event.ref?.slice(0, 255) ?? null,
        commit: event.commit?.slice(0, 64) ?? null,
        ...recorded,
        reason: recorded.reason.slice(0, 2000),
      };
      await this.deliveries.record(record);
      // After the record, so a refusal of the deploy amends it.
      if (start) void start();
      this.log.info({ workload: record.workload, source, deliveryId, decision: recorded.decision, reason: recorded.reason }, 'webhook delivery');
      results.push({ kind: w.kind, id: w.row.id, decision: recorded.decision, reason: recorded.reason, deploymentId: recorded.deploymentId });
    }
    return replays > 0 && replays === workloads.length ? { results, replay: true } : { results };
  }

  private async decideAndQueue(w: WebhookWorkload, event: ForgeEvent) {
    const decision = decidePush(deploySettingsOf(w.row), event);
    if (!decision.deploy) return { decision: 'ignored' as const, reason: decision.reason, deploymentId: null };
    const what = event.kind === 'tag' ? `tag ${event.ref}` : event.ref ? `push to ${event.ref}` : 'webhook';
    const title = `Webhook: ${what}${event.commit ? ` (${event.commit.slice(0, 7)})` : ''}`;
    try {
      const queued = await this.queueOnce(w, title);
      const reason = queued.joined ? `${decision.reason}; joins queued deployment ${queued.deploymentId} (it builds the newest commit)` : decision.reason;
      return { decision: 'deployed' as const, reason, deploymentId: queued.deploymentId, start: queued.joined ? undefined : queued.start };
    } catch (err) {
      // The deploy's own refusal (a missing setting, a forge source not yet buildable) is the reason.
      if (err instanceof DomainError) {
        const detail = err.issues.length > 0 ? err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : err.message;
        return { decision: 'refused' as const, reason: `refused: ${detail}`, deploymentId: null };
      }
      throw err;
    }
  }

  /**
   * Queues a deploy unless one of the workload's is already waiting: a queued deploy has not
   * cloned yet and builds the branch's newest commit, so a burst of pushes queues one build.
   * Deliveries arriving while the deploy is being queued join it (no second lock wait).
   */
  private queueOnce(w: WebhookWorkload, title: string): Promise<QueuedDeploy & { joined: boolean }> {
    const key = `${w.kind}:${w.row.id}`;
    const pending = this.pending.get(key);
    if (pending) return pending.then(({ deploymentId }) => ({ deploymentId, joined: true }));
    const queue = (async () => {
      const waiting = await this.waitingDeployment(w);
      if (waiting) return { deploymentId: waiting, joined: true };
      const principal = webhookPrincipal(await organizationOf(this.db, w.row.environmentId));
      return { ...(await this.deployer.deploy(principal, w, title)), joined: false };
    })();
    this.pending.set(key, queue);
    return queue.finally(() => this.pending.delete(key));
  }

  /** A deployment of the workload that is queued and not yet started, if any. */
  private async waitingDeployment(w: WebhookWorkload): Promise<string | null> {
    const row = await this.db
      .selectFrom('deployments')
      .select('id')
      .where(w.kind === 'application' ? 'applicationId' : 'composeId', '=', w.row.id)
      .where('status', '=', 'queued')
      .where('previewDeploymentId', 'is', null)
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /** The forgeA connections whose webhook secret verifies the delivery. */
  private async githubConnectionsVerifying(body: string, signature: string | undefined): Promise<Set<string>> {
    const ok = new Set<string>();
    if (!signature) return ok;
    const rows = await this.db.selectFrom('gitProviders').select(['id', 'secrets']).where('kind', '=', 'forgeA').execute();
    for (const row of rows) {
      const secret = (JSON.parse(this.deps.secrets.open(row.secrets)) as { webhookSecret?: unknown }).webhookSecret;
      if (typeof secret === 'string' && secret !== '' && verifySignature('github', secret, body, signature)) ok.add(row.id);
    }
    return ok;
  }
}

/**
 * A body that is not JSON reads as an empty object (its event then decides nothing). Text
 * PostgreSQL cannot store is mended in its strings (U+0000 dropped, a lone surrogate made U+FFFD),
 * so a branch or title quoting it is recorded rather than failing the delivery; the signature covers the raw body.
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text, (_key, value: unknown) => (typeof value === 'string' && !storable(value) ? (value.replaceAll('\u0000', '') as unknown as WellFormed).toWellFormed() : value));
  } catch {
    return {};
  }
}

/** ES2024's string methods (Node 20 and later); the workspace's lib (ES2023) does not declare them. */
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };
const storable = (text: string) => !text.includes('\u0000') && (text as unknown as WellFormed).isWellFormed();
