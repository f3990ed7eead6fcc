/**
 * Metrics (ARCHITECTURE.md "Metrics and events"): what agents sample goes into the bounded
 * store (metrics-store.ts) and past each server's thresholds (thresholds.ts); the
 * `user.get*Metrics` operations answer from the store only. The platform host (server
 * `local`) is every organization's: its host metrics, thresholds and cleaning are for the
 * platform administrator; another server's for its organization's admins. Containers are
 * shown only of the caller's own workloads.
 */
import type { MetricsResolution } from '@skiff/db';
import { LOCAL_SERVER_ID } from '@skiff/domain';
import type { ContainerMetricsPoint } from '@skiff/contracts';
import { type MetricsBatch, timestampToDate } from '@skiff/proto';
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import { canSeeServer, canSeeService, requirePlatformAdmin } from '../../authz/policy.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';
import { iso, type ServiceDeps } from '../shared/deps.js';
import { serviceTables } from '../shared/service-records.js';
import { BUCKET_SECONDS, type ContainerRow, type HostRow, MetricsStore } from './metrics-store.js';
import { type ThresholdEvent, ThresholdWatches } from './thresholds.js';

export interface MetricsOptions {
  /** Containers kept per server and sampling instant (SKIFF_METRICS_MAX_CONTAINERS); default 50. */
  maxContainers?: number;
  /** How long a value stays past a threshold before it alerts or recovers (SKIFF_METRICS_ALERT_SECONDS); default 60 s. */
  thresholdDurationMs?: number;
  /** Percentage points under the threshold to recover; default 5. */
  hysteresis?: number;
  /** A threshold crossed or recovered (a serverThreshold event). */
  onThreshold?: (serverId: string, kind: ThresholdEvent['kind'], value: number, threshold: number, state: ThresholdEvent['state']) => Promise<void>;
  log: Logger;
}

const DEFAULT_POINTS = 50;
const MAX_POINTS = 8640;
const NAME_LIMIT = 255;

type Resolution = 'full' | '5m';
const resolutionOf = (r: Resolution | undefined): MetricsResolution => (r === '5m' ? BUCKET_SECONDS : 0);

export class MetricsService {
  readonly store: MetricsStore;
  private readonly watches: ThresholdWatches;
  private retainedUntil: Date | null = null;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly o: MetricsOptions,
  ) {
    this.store = new MetricsStore(deps.db, deps.clock, { maxContainers: o.maxContainers ?? 50 });
    this.watches = new ThresholdWatches({ minDurationMs: o.thresholdDurationMs ?? 60_000, hysteresis: o.hysteresis ?? 5 });
  }

  /** Stores what an agent sent and checks its server's thresholds. */
  async record(serverId: string, batch: MetricsBatch): Promise<void> {
    const hosts = batch.hosts.flatMap((h): HostRow[] => {
      const at = h.at ? timestampToDate(h.at) : null;
      const v = [h.cpuPercent, h.memoryUsedBytes, h.memoryTotalBytes, h.diskUsedBytes, h.diskTotalBytes, h.networkRxBytesPerSecond, h.networkTxBytesPerSecond];
      if (!at || !v.every(isMeasure)) return [];
      return [
        {
          serverId,
          resolution: 0,
          at,
          cpuPercent: h.cpuPercent,
          cpuMax: h.cpuPercent,
          memoryUsed: h.memoryUsedBytes,
          memoryMax: h.memoryUsedBytes,
          memoryTotal: h.memoryTotalBytes,
          diskUsed: h.diskUsedBytes,
          diskTotal: h.diskTotalBytes,
          networkRx: h.networkRxBytesPerSecond,
          networkTx: h.networkTxBytesPerSecond,
        },
      ];
    });
    const containers = batch.containers.flatMap((c): ContainerRow[] => {
      const at = c.at ? timestampToDate(c.at) : null;
      const v = [c.cpuPercent, c.memoryUsedBytes, c.memoryLimitBytes, c.networkRxBytesPerSecond, c.networkTxBytesPerSecond];
      if (!at || !v.every(isMeasure) || !c.containerName) return [];
      return [
        {
          serverId,
          resolution: 0,
          at,
          containerName: c.containerName.slice(0, NAME_LIMIT),
          appName: c.appName.slice(0, NAME_LIMIT),
          workloadId: c.workloadId.slice(0, NAME_LIMIT),
          cpuPercent: c.cpuPercent,
          cpuMax: c.cpuPercent,
          memoryUsed: c.memoryUsedBytes,
          memoryMax: c.memoryUsedBytes,
          memoryLimit: c.memoryLimitBytes,
          networkRx: c.networkRxBytesPerSecond,
          networkTx: c.networkTxBytesPerSecond,
        },
      ];
    });
    const kept = await this.store.add(serverId, hosts, containers);
    if (kept.length > 0) await this.checkThresholds(serverId, kept);
  }

  private async checkThresholds(serverId: string, hosts: HostRow[]): Promise<void> {
    const limits = await this.deps.db.selectFrom('serverMetricThresholds').selectAll().where('serverId', '=', serverId).executeTakeFirst();
    for (const h of [...hosts].sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime())) {
      const atMs = new Date(h.at).getTime();
      const memory = h.memoryTotal > 0 ? round2((100 * h.memoryUsed) / h.memoryTotal) : 0;
      const events = [
        this.watches.observe(serverId, 'cpu', h.cpuPercent, limits?.cpuPercent ?? null, atMs),
        this.watches.observe(serverId, 'memory', memory, limits?.memoryPercent ?? null, atMs),
      ];
      for (const e of events) {
        if (!e) continue;
        this.o.log.info({ serverId, kind: e.kind, value: e.value, threshold: e.threshold, state: e.state }, 'server threshold');
        await this.o.onThreshold?.(e.serverId, e.kind, e.value, e.threshold, e.state).catch((err: unknown) =>
          this.o.log.error({ err: err instanceof Error ? err.message : String(err), serverId }, 'could not emit the threshold event'),
        );
      }
    }
  }

  /** Downsamples and deletes what aged out (the retention job, every few minutes). */
  async retain(): Promise<void> {
    const now = this.deps.clock();
    // The first run rewrites the whole day's buckets, later ones the last hour's.
    const since = this.retainedUntil ? new Date(this.retainedUntil.getTime() - 3600_000) : new Date(now.getTime() - 24 * 3600_000);
    await this.store.retain(since);
    this.retainedUntil = now;
  }

  async getServerMetrics(p: Principal, input: { serverId?: string; dataPoints?: string; resolution?: Resolution }) {
    const serverId = await this.server(p, input.serverId, 'see');
    const rows = await this.store.host(serverId, resolutionOf(input.resolution), points(input.dataPoints));
    const limits = await this.deps.db.selectFrom('serverMetricThresholds').selectAll().where('serverId', '=', serverId).executeTakeFirst();
    return {
      serverId,
      resolution: input.resolution ?? ('full' as const),
      thresholds: { cpuPercent: limits?.cpuPercent ?? null, memoryPercent: limits?.memoryPercent ?? null },
      points: rows.map((r) => ({
        at: iso(r.at),
        cpuPercent: r.cpuPercent,
        cpuMaxPercent: r.cpuMax,
        memoryUsedBytes: r.memoryUsed,
        memoryMaxBytes: r.memoryMax,
        memoryTotalBytes: r.memoryTotal,
        memoryPercent: r.memoryTotal > 0 ? round2((100 * r.memoryUsed) / r.memoryTotal) : 0,
        diskUsedBytes: r.diskUsed,
        diskTotalBytes: r.diskTotal,
        networkRxBytesPerSecond: r.networkRx,
        networkTxBytesPerSecond: r.networkTx,
      })),
    };
  }

  /** The caller's workloads named `appName` (one per server at most), each with its containers' points; NOT_FOUND when it has none. */
  async getContainerMetrics(p: Principal, input: { appName?: string; dataPoints?: string; resolution?: Resolution }) {
    if (!input.appName) throw Invalid('appName', 'required');
    const limit = points(input.dataPoints);
    const workloads = await this.workloadsNamed(p, input.appName);
    const containers: Array<{ serverId: string; containerName: string; workloadId: string; points: Array<z.infer<typeof ContainerMetricsPoint>> }> = [];
    for (const w of workloads) {
      const serverId = w.serverId ?? LOCAL_SERVER_ID;
      const rows = await this.store.containers(serverId, input.appName, resolutionOf(input.resolution), limit);
      const byName = new Map<string, (typeof containers)[number]>();
      for (const r of rows) {
        let c = byName.get(r.containerName);
        if (!c) byName.set(r.containerName, (c = { serverId, containerName: r.containerName, workloadId: w.id, points: [] }));
        c.points.push({
          at: iso(r.at),
          cpuPercent: r.cpuPercent,
          cpuMaxPercent: r.cpuMax,
          memoryUsedBytes: r.memoryUsed,
          memoryMaxBytes: r.memoryMax,
          memoryLimitBytes: r.memoryLimit,
          networkRxBytesPerSecond: r.networkRx,
          networkTxBytesPerSecond: r.networkTx,
        });
      }
      containers.push(...byName.values());
    }
    return { appName: input.appName, resolution: input.resolution ?? ('full' as const), containers };
  }

  async cleanMonitoring(p: Principal, input: { serverId?: string }): Promise<Record<string, never>> {
    const serverId = await this.server(p, input.serverId, 'manage');
    await this.store.clean(serverId);
    return {};
  }

  async updateThresholds(p: Principal, input: { serverId?: string; cpuPercent?: number | null; memoryPercent?: number | null }) {
    const serverId = await this.server(p, input.serverId, 'manage');
    const current = await this.deps.db.selectFrom('serverMetricThresholds').selectAll().where('serverId', '=', serverId).executeTakeFirst();
    const next = {
      cpuPercent: input.cpuPercent !== undefined ? input.cpuPercent : (current?.cpuPercent ?? null),
      memoryPercent: input.memoryPercent !== undefined ? input.memoryPercent : (current?.memoryPercent ?? null),
    };
    await this.deps.db
      .insertInto('serverMetricThresholds')
      .values({ serverId, ...next, updatedAt: this.deps.clock() })
      .onConflict((oc) => oc.column('serverId').doUpdateSet({ ...next, updatedAt: this.deps.clock() }))
      .execute();
    return { serverId, ...next };
  }

  /**
   * The server an operation targets: none or `local` is the platform host (platform
   * administrators only); another is one of the caller's organization they may see.
   */
  private async server(p: Principal, serverId: string | undefined, why: 'see' | 'manage'): Promise<string> {
    if (serverId === undefined || serverId === LOCAL_SERVER_ID) {
      requirePlatformAdmin(p, `Only a platform administrator may ${why} the platform host's monitoring`);
      return LOCAL_SERVER_ID;
    }
    const server = await this.deps.db.selectFrom('servers').select(['id', 'organizationId']).where('id', '=', serverId).executeTakeFirst();
    if (!server || server.organizationId !== p.organizationId) throw NotFound('No such server');
    if (!canSeeServer(p, serverId)) throw Forbidden('No access to this server');
    return serverId;
  }

  private async workloadsNamed(p: Principal, appName: string): Promise<Array<{ id: string; serverId: string | null }>> {
    const found: Array<{ id: string; serverId: string | null }> = [];
    let inOrganization = 0;
    for (const { table } of Object.values(serviceTables)) {
      // Each service table has these columns; the alias lets one query serve the three.
      const rows = await this.deps.db
        .selectFrom(`${table} as w` as 'applications as w')
        .innerJoin('environments', 'environments.id', 'w.environmentId')
        .innerJoin('projects', 'projects.id', 'environments.projectId')
        .select(['w.id as id', 'w.serverId as serverId', 'projects.id as projectId'])
        .where('w.appName', '=', appName)
        .where('projects.organizationId', '=', p.organizationId)
        .execute();
      inOrganization += rows.length;
      for (const r of rows) if (canSeeService(p, r, r.projectId)) found.push({ id: r.id, serverId: r.serverId });
    }
    // Another organization's workload is as unknown as none at all.
    if (inOrganization === 0) throw NotFound('No such workload');
    if (found.length === 0) throw Forbidden('No access to this workload');
    return found;
  }
}

const isMeasure = (n: number) => Number.isFinite(n) && n >= 0 && n < 1e18;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** `dataPoints` as the spec types it (a string): a whole number from 1 to 8640. */
function points(dataPoints: string | undefined): number {
  if (dataPoints === undefined || dataPoints === '') return DEFAULT_POINTS;
  const n = Number(dataPoints);
  if (!/^\d+$/.test(dataPoints.trim()) || n < 1 || n > MAX_POINTS) throw Invalid('dataPoints', `must be a whole number from 1 to ${MAX_POINTS}`);
  return n;
}
