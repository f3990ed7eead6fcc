import type { ColumnType } from 'kysely';

/** Full resolution (0: as sampled, every 10 s by default) or a downsampled bucket's seconds (300). */
export type MetricsResolution = 0 | 300;

/** A host sample, or a 5-minute bucket of them (averages; `*Max` the bucket's maxima). */
export interface HostMetricsTable {
  serverId: string;
  resolution: MetricsResolution;
  at: ColumnType<Date, Date | string, Date | string>;
  cpuPercent: number;
  cpuMax: number;
  memoryUsed: number;
  memoryMax: number;
  memoryTotal: number;
  diskUsed: number;
  diskTotal: number;
  /** Bytes per second. */
  networkRx: number;
  networkTx: number;
}

/** A container sample, or a 5-minute bucket of them. */
export interface ContainerMetricsTable {
  serverId: string;
  resolution: MetricsResolution;
  at: ColumnType<Date, Date | string, Date | string>;
  containerName: string;
  appName: string;
  workloadId: string;
  cpuPercent: number;
  cpuMax: number;
  memoryUsed: number;
  memoryMax: number;
  memoryLimit: number;
  networkRx: number;
  networkTx: number;
}

/** A server's alert thresholds (null: no alert); server id `local` is the platform host. */
export interface ServerMetricThresholdsTable {
  serverId: string;
  cpuPercent: number | null;
  memoryPercent: number | null;
  updatedAt: ColumnType<Date, Date | string | undefined, Date | string>;
}
