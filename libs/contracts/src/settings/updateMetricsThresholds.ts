import { z } from 'zod';
import { defineContract } from '../contract.js';
import { MetricThresholds } from '../user/metrics.js';

const Percent = z.number().min(0).max(100).nullable().optional();

export const updateMetricsThresholds = defineContract({
  method: 'POST',
  summary: "Set a server's CPU and memory alert thresholds",
  description:
    'A serverThreshold event is sent once when the host CPU (of all cores) or memory use stays at or above its ' +
    'threshold for SKIFF_METRICS_ALERT_SECONDS, and once when it has stayed 5 points below it as long. `null` ' +
    'turns an alert off; a field not given is kept. Without `serverId`: the platform host (platform ' +
    "administrators only); with it, a remote server of the organization (its admins).",
  input: z.object({ serverId: z.string().optional(), cpuPercent: Percent, memoryPercent: Percent }),
  output: z.object({ serverId: z.string() }).merge(MetricThresholds),
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example', cpuPercent: 90, memoryPercent: 85 },
});
