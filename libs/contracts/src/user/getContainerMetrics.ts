import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ContainerMetricsPoint, MetricsResolutionInput } from './metrics.js';

export const getContainerMetrics = defineContract({
  method: 'GET',
  summary: 'Recent metrics of the containers of one workload',
  description:
    "The containers of the caller's workload named `appName` (required), from the control plane's metrics store. " +
    '`url` and `token` are accepted and ignored: nothing is ever fetched from an address the caller gives. ' +
    '`dataPoints`: the newest sampling instants, default 50, at most 8640. `resolution` ' +
    '(`full` or `5m`, as user.getServerMetrics). CPU is a percentage of one core.',
  input: z.object({
    url: z.string().optional(),
    token: z.string().optional(),
    appName: z.string().optional(),
    dataPoints: z.string().optional(),
    resolution: MetricsResolutionInput,
  }),
  output: z.object({
    appName: z.string(),
    resolution: z.enum(['full', '5m']),
    containers: z.array(
      z.object({ serverId: z.string(), containerName: z.string(), workloadId: z.string(), points: z.array(ContainerMetricsPoint) }),
    ),
  }),
  example: { appName: 'shop-web', dataPoints: '50' },
});
