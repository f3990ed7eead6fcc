import type { NatsConnection } from '@nats-io/transport-node';
import type { Db } from '@skiff/db';
import type { AgentControl } from './agents/outbound/control-client.js';
import { DEFAULT_LOG_LIMITS, type LogLimits, LogStreamClient } from './agents/outbound/log-streams.js';
import type { LogRoutes } from './http/logs.js';
import { containerHandlers } from './routers/container.js';
import { ContainerRequests, ContainerService, LogService } from './services/containers/index.js';
import type { DeploymentService } from './services/deployments/index.js';
import type { ServiceAccess } from './services/shared/index.js';

/** The container.* operations and the log streams, wired (compose-root.ts has no room left). */
export function buildContainers(o: {
  db: Db;
  access: ServiceAccess;
  agentControl: AgentControl;
  connection: () => Promise<NatsConnection>;
  deployments: Pick<DeploymentService, 'readLogs'>;
  limits?: Partial<LogLimits>;
}) {
  const requests = new ContainerRequests(o.agentControl);
  const containers = new ContainerService(o.db, requests);
  const streams = new LogStreamClient({ connection: o.connection, control: o.agentControl, limits: { ...DEFAULT_LOG_LIMITS, ...o.limits } });
  const logs = new LogService({ access: o.access, containers, requests, streams, deployments: o.deployments });
  const logRoutes: LogRoutes = {
    open: (route, principal, query, signal) =>
      route === 'service'
        ? logs.service(principal, query as never, signal)
        : route === 'container'
          ? logs.container(principal, query as never, signal)
          : logs.deployment(principal, query as never, signal),
  };
  return { handlers: containerHandlers(containers), logRoutes };
}
