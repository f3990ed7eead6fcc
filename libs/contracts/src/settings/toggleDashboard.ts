import { z } from 'zod';
import { defineContract } from '../contract.js';
import { PROXY_FILES_NOTE, ProxyDashboardState, ProxyServerId } from './proxy.js';

export const toggleDashboard = defineContract({
  method: 'POST',
  summary: 'Turn the reverse-proxy dashboard on or off',
  description:
    "Caddy has no web dashboard; Skiff's proxy dashboard is Caddy's Prometheus metrics " +
    '(`/metrics`), served by the proxy on a port of its own, published on the host at ' +
    '`SKIFF_PROXY_DASHBOARD_PORT` (default 2020) on `SKIFF_PROXY_DASHBOARD_BIND` (default ' +
    '127.0.0.1) as the agent is configured. ' +
    '`enableDashboard` (optional) sets the state, and when omitted the current state is ' +
    'flipped; turning it on where the agent publishes no dashboard port is a BAD_REQUEST naming ' +
    '`enableDashboard`. The proxy is reloaded, not restarted. `serverId` (optional) picks the ' +
    'server. Answers the new state. ' +
    PROXY_FILES_NOTE,
  input: z.object({
    enableDashboard: z.boolean().optional(),
    serverId: ProxyServerId,
  }),
  output: ProxyDashboardState,
  access: { role: 'admin' },
  example: { enableDashboard: true },
});
