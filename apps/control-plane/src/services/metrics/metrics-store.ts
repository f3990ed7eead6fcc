/**
 * The metrics store: samples at full resolution for a day, 5-minute averages and maxima for
 * 30 days. Its size is bounded whatever an agent sends: per server at most one host sample
 * and `maxContainers` container samples per sampling instant are kept (the first by name),
 * samples from outside the retention window are refused, and `retain()` downsamples and
 * deletes what aged out.
 */
import type { ContainerMetricsTable, Db, HostMetricsTable, MetricsResolution } from '@skiff/db';
import type { Insertable } from 'kysely';
import { sql } from 'kysely';

export const FULL_RESOLUTION_MS = 24 * 3600_000;
export const DOWNSAMPLED_MS = 30 * 24 * 3600_000;
export const BUCKET_SECONDS = 300;
/** Sampling instants one batch may carry (an agent sends one per round). */
const MAX_ROUNDS_PER_BATCH = 10;

export type HostRow = Insertable<HostMetricsTable>;
export type ContainerRow = Insertable<ContainerMetricsTable>;

export interface StoreLimits {
  /** Containers of one server kept per sampling instant (SKIFF_METRICS_MAX_CONTAINERS, default 50). */
  maxContainers: number;
}

export class MetricsStore {
  constructor(
    private readonly db: Db,
    private readonly clock: () => Date,
    readonly limits: StoreLimits,
  ) {}

  /** Keeps what fits the bounds; answers the host rows kept (for the threshold checks). */
  async add(serverId: string, hosts: HostRow[], containers: ContainerRow[]): Promise<HostRow[]> {
    const now = this.clock().getTime();
    const fresh = (at: Date | string) => {
      const t = new Date(at).getTime();
      return t > now - FULL_RESOLUTION_MS && t < now + 60_000;
    };
    const keptHosts = hosts.filter((h) => fresh(h.at)).slice(0, MAX_ROUNDS_PER_BATCH);
    const byInstant = new Map<number, ContainerRow[]>();
    for (const c of containers) {
      if (!fresh(c.at)) continue;
      const t = new Date(c.at).getTime();
      const rows = byInstant.get(t) ?? [];
      rows.push(c);
      byInstant.set(t, rows);
    }
    const keptContainers = [...byInstant.values()]
      .slice(0, MAX_ROUNDS_PER_BATCH)
      .flatMap((rows) => rows.sort((a, b) => a.containerName.localeCompare(b.containerName)).slice(0, this.limits.maxContainers));
    if (keptHosts.length > 0) {
      await this.db.insertInto('hostMetrics').values(keptHosts.map((h) => ({ ...h, serverId, resolution: 0 as const }))).onConflict((oc) => oc.doNothing()).execute();
    }
    if (keptContainers.length > 0) {
      await this.db
        .insertInto('containerMetrics')
        .values(keptContainers.map((c) => ({ ...c, serverId, resolution: 0 as const })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    return keptHosts;
  }

  /** The newest `limit` host rows of a resolution, oldest first. */
  async host(serverId: string, resolution: MetricsResolution, limit: number) {
    const rows = await this.db
      .selectFrom('hostMetrics')
      .selectAll()
      .where('serverId', '=', serverId)
      .where('resolution', '=', resolution)
      .orderBy('at', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse();
  }

  /** The newest `limit` sampling instants of an app's containers, oldest first. */
  async containers(serverId: string, appName: string, resolution: MetricsResolution, limit: number) {
    const instants = this.db
      .selectFrom('containerMetrics')
      .select('at')
      .distinct()
      .where('serverId', '=', serverId)
      .where('appName', '=', appName)
      .where('resolution', '=', resolution)
      .orderBy('at', 'desc')
      .limit(limit);
    return this.db
      .selectFrom('containerMetrics')
      .selectAll()
      .where('serverId', '=', serverId)
      .where('appName', '=', appName)
      .where('resolution', '=', resolution)
      .where('at', 'in', instants)
      .orderBy('at')
      .orderBy('containerName')
      .execute();
  }

  /** Empties a server's metrics. */
  async clean(serverId: string): Promise<void> {
    await this.db.deleteFrom('hostMetrics').where('serverId', '=', serverId).execute();
    await this.db.deleteFrom('containerMetrics').where('serverId', '=', serverId).execute();
  }

  /**
   * Writes the 5-minute buckets of full-resolution samples from `since` on (buckets
   * rewritten as they fill), then deletes full-resolution rows older than a day and
   * buckets older than 30 days.
   */
  async retain(since: Date): Promise<void> {
    const now = this.clock();
    const origin = sql`timestamptz '2000-01-01T00:00:00Z'`;
    const from = sql`date_bin(${sql.raw(`'${BUCKET_SECONDS} seconds'`)}, ${since}::timestamptz, ${origin})`;
    const bucket = sql`date_bin(${sql.raw(`'${BUCKET_SECONDS} seconds'`)}, at, ${origin})`;
    await sql`
      insert into host_metrics (server_id, resolution, at, cpu_percent, cpu_max, memory_used, memory_max, memory_total, disk_used, disk_total, network_rx, network_tx)
      select server_id, ${BUCKET_SECONDS}, ${bucket} as b, avg(cpu_percent), max(cpu_max), avg(memory_used), max(memory_max), max(memory_total),
             avg(disk_used), max(disk_total), avg(network_rx), avg(network_tx)
      from host_metrics where resolution = 0 and at >= ${from}
      group by server_id, b
      on conflict (server_id, resolution, at) do update set
        cpu_percent = excluded.cpu_percent, cpu_max = excluded.cpu_max, memory_used = excluded.memory_used, memory_max = excluded.memory_max,
        memory_total = excluded.memory_total, disk_used = excluded.disk_used, disk_total = excluded.disk_total,
        network_rx = excluded.network_rx, network_tx = excluded.network_tx`.execute(this.db);
    await sql`
      insert into container_metrics (server_id, resolution, at, container_name, app_name, workload_id, cpu_percent, cpu_max, memory_used, memory_max, memory_limit, network_rx, network_tx)
      select server_id, ${BUCKET_SECONDS}, ${bucket} as b, container_name, max(app_name), max(workload_id), avg(cpu_percent), max(cpu_max),
             avg(memory_used), max(memory_max), max(memory_limit), avg(network_rx), avg(network_tx)
      from container_metrics where resolution = 0 and at >= ${from}
      group by server_id, b, container_name
      on conflict (server_id, resolution, container_name, at) do update set
        cpu_percent = excluded.cpu_percent, cpu_max = excluded.cpu_max, memory_used = excluded.memory_used, memory_max = excluded.memory_max,
        memory_limit = excluded.memory_limit, network_rx = excluded.network_rx, network_tx = excluded.network_tx`.execute(this.db);
    const fullBefore = new Date(now.getTime() - FULL_RESOLUTION_MS);
    const downsampledBefore = new Date(now.getTime() - DOWNSAMPLED_MS);
    for (const table of ['hostMetrics', 'containerMetrics'] as const) {
      await this.db.deleteFrom(table).where('resolution', '=', 0).where('at', '<', fullBefore).execute();
      await this.db.deleteFrom(table).where('resolution', '=', BUCKET_SECONDS).where('at', '<', downsampledBefore).execute();
    }
  }
}
