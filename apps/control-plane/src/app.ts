import { Hono } from 'hono';
import type { Logger } from 'pino';
import { PrincipalCache } from './http/authenticate.js';
import type { AllHandlers } from './http/context.js';
import { mountApiDocs } from './http/api-docs.js';
import { errorBody } from './http/envelope.js';
import { type LogRoutes, mountLogs } from './http/logs.js';
import { mountApi } from './http/mount.js';
import { mountDashboard } from './http/dashboard.js';
import { mountWebhooks, type WebhookReceivers } from './http/webhooks.js';
import { type EventStreamDeps, mountEventStream } from './http/event-stream.js';
import type { AuditRecorder } from './http/audit-trail.js';
import type { UploadLimits } from './http/uploads.js';
import { randomIds } from './ids.js';

export interface AppDeps {
  handlers: AllHandlers;
  principals: PrincipalCache;
  log: Logger;
  openApiDocument: () => Record<string, unknown>;
  /** Readiness probe: resolves when the database answers. */
  checkHealth: () => Promise<void>;
  validateOutput?: boolean;
  /** Where uploaded files (`application.dropDeployment`) are received, and their size limit. */
  uploads?: UploadLimits;
  /** Where mutating operations are recorded. */
  audit?: AuditRecorder;
  /** Public routes the payment provider calls (`POST /webhooks/billing`); none: not served. */
  webhooks?: WebhookReceivers;
  /** The event stream (`GET /api/events`); none: not served. */
  eventStream?: Omit<EventStreamDeps, 'principals' | 'log' | 'newRequestId'>;
  /** The log streams (`GET /api/logs.*`, server-sent events); none: not served. */
  logs?: LogRoutes;
  /** The built web dashboard, served at `/` (http/dashboard.ts); none: not served. */
  dashboardDir?: string;
}

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  const newRequestId = () => randomIds('req');

  app.get('/health', async (c) => {
    try {
      await deps.checkHealth();
      return c.json({ status: 'ok' });
    } catch (err) {
      deps.log.error({ err }, 'health check failed');
      return c.json({ status: 'unavailable' }, 503);
    }
  });
  app.get('/api/openapi.json', (c) => c.json(deps.openApiDocument()));
  mountApiDocs(app);
  if (deps.eventStream) mountEventStream(app, { ...deps.eventStream, principals: deps.principals, log: deps.log, newRequestId });
  if (deps.logs) mountLogs(app, deps.logs, { principals: deps.principals, log: deps.log, newRequestId });
  mountApi(app, { ...deps, newRequestId });
  if (deps.webhooks) mountWebhooks(app, deps.webhooks, { log: deps.log, newRequestId });
  if (deps.dashboardDir) mountDashboard(app, deps.dashboardDir);
  app.notFound((c) => {
    const requestId = newRequestId();
    return c.json(errorBody('NOT_FOUND', requestId, `No route ${c.req.method} ${c.req.path}`), 404);
  });
  app.onError((err, c) => {
    const requestId = newRequestId();
    deps.log.error({ err, requestId }, 'unhandled error');
    return c.json(errorBody('INTERNAL_SERVER_ERROR', requestId), 500);
  });
  return app;
}
