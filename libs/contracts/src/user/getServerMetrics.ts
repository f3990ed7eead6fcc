import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostMetricsPoint, MetricsResolutionInput, MetricThresholds } from './metrics.js';

export const getServerMetrics = defineContract({
  method: 'GET',
  summary: 'Recent host metrics of the platform server',
  description:
    "From the control plane's metrics store (what the server's agent samples every 10 s), never from elsewhere. " +
    '`serverId` picks a remote server of the organization (without it: the platform host, for ' +
    'platform administrators only); `dataPoints` (default 50, at most 8640) the newest points; `resolution` ' +
    '`full` (kept a day) or `5m` (5-minute averages with their maxima, kept 30 days). CPU is a percentage of all cores.',
  input: z.object({
    serverId: z.string().optional(),
    dataPoints: z.string().optional(),
    resolution: MetricsResolutionInput,
  }),
  output: z.object({
    serverId: z.string(),
    resolution: z.enum(['full', '5m']),
    thresholds: MetricThresholds,
    points: z.array(HostMetricsPoint),
  }),
  access: { role: 'admin' },
  example: { serverId: 'srv_example', dataPoints: '60' },
});
