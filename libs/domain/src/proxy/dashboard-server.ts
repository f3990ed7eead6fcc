/**
 * The proxy "dashboard": Caddy's Prometheus metrics (handler `metrics`) on a server of its
 * own, at `/metrics` only (404 elsewhere), plain HTTP (no host to get a certificate for).
 */
import type { CaddyHandler } from './caddy-input.js';

export const DASHBOARD_SERVER = 'skiff_dashboard';
export const DASHBOARD_PATH = '/metrics';

export function dashboardServer(port: number): Record<string, unknown> {
  const notFound: CaddyHandler = { handler: 'static_response', status_code: 404 };
  return {
    listen: [`:${port}`],
    routes: [
      { match: [{ path: [DASHBOARD_PATH] }], handle: [{ handler: 'metrics' }], terminal: true },
      { handle: [notFound], terminal: true },
    ],
    automatic_https: { disable: true },
  };
}
