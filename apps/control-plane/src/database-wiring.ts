import type { AllHandlers } from './http/context.js';
import type { CommandOutbox } from './agents/outbound/outbox.js';
import type { CommandStream } from './agents/outbound/command-withdrawal.js';
import { databaseHandlers } from './routers/database.js';
import { DatabaseLifecycle, DatabaseServices } from './services/databases/index.js';
import type { IdentityService } from './services/identity/identity.js';
import type { ProjectService } from './services/projects/projects.js';
import type { ServiceDeps } from './services/shared/deps.js';
import type { ServiceAccess } from './services/shared/service-access.js';

/** Database services (dbA..dbE): their records, lifecycle and the five routers' handlers. */
export function databaseServices(parts: {
  deps: ServiceDeps;
  access: ServiceAccess;
  projects: ProjectService;
  identity: IdentityService;
  outbox: CommandOutbox;
  stream: CommandStream;
  publicIp?: string;
}) {
  const records = new DatabaseServices(parts.deps, parts.access, parts.projects, parts.identity, { publicIp: parts.publicIp });
  const lifecycle = new DatabaseLifecycle(parts.deps, parts.outbox, records, parts.stream);
  const handlers: Pick<AllHandlers, 'dbA' | 'dbB' | 'dbC' | 'dbD' | 'dbE'> = {
    dbA: databaseHandlers('dbA', records, lifecycle),
    dbB: databaseHandlers('dbB', records, lifecycle),
    dbC: databaseHandlers('dbC', records, lifecycle),
    dbD: databaseHandlers('dbD', records, lifecycle),
    dbE: databaseHandlers('dbE', records, lifecycle),
  };
  return { records, lifecycle, handlers };
}
