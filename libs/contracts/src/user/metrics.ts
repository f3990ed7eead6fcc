import { z } from 'zod';

/** `resolution` (beyond the spec) of the metrics reads: samples as taken (kept a day) or 5-minute buckets (kept 30 days). */
export const MetricsResolutionInput = z.enum(['full', '5m']).optional();

const Measure = z.number();

export const HostMetricsPoint = z.object({
  at: z.string(),
  cpuPercent: Measure,
  cpuMaxPercent: Measure,
  memoryUsedBytes: Measure,
  memoryMaxBytes: Measure,
  memoryTotalBytes: Measure,
  memoryPercent: Measure,
  diskUsedBytes: Measure,
  diskTotalBytes: Measure,
  networkRxBytesPerSecond: Measure,
  networkTxBytesPerSecond: Measure,
});

export const ContainerMetricsPoint = z.object({
  at: z.string(),
  cpuPercent: Measure,
  cpuMaxPercent: Measure,
  memoryUsedBytes: Measure,
  memoryMaxBytes: Measure,
  memoryLimitBytes: Measure,
  networkRxBytesPerSecond: Measure,
  networkTxBytesPerSecond: Measure,
});

export const MetricThresholds = z.object({ cpuPercent: z.number().nullable(), memoryPercent: z.number().nullable() });
