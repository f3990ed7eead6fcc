import { type DatabaseHandle, migrateToLatest, openDatabase } from '@skiff/db';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { SecretBox } from './crypto/secret-box.js';
import { PrincipalCache } from './http/authenticate.js';
import type { AllHandlers } from './http/context.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { type IdGenerator, randomIds } from './ids.js';
import { applicationHandlers } from './routers/application.js';
import { environmentHandlers } from './routers/environment.js';
import { notificationHandlers } from './routers/notification.js';
import { organizationHandlers } from './routers/organization.js';
import { projectHandlers } from './routers/project.js';
import { settingsHandlers } from './routers/settings.js';
import { userHandlers } from './routers/user.js';
import type { ServiceDeps } from './services/deps.js';
import { ApplicationService } from './services/applications.js';
import { IdentityService } from './services/identity.js';
import { MetricsTokenService } from './services/metrics-tokens.js';
import { OrganizationService } from './services/organizations.js';
import { ProjectService } from './services/projects.js';
import { ServiceAccess } from './services/service-access.js';

export interface PlatformOptions {
  database: { url?: string; pgliteDir?: string };
  secretKey: Buffer;
  log: Logger;
  version: string;
  ids?: IdGenerator;
  clock?: () => Date;
  validateOutput?: boolean;
}

/** Everything the control plane is made of, wired together; used by main.ts and the tests. */
export async function buildPlatform(options: PlatformOptions) {
  const database: DatabaseHandle = await openDatabase(options.database);
  await migrateToLatest(database.db);

  let principals: PrincipalCache | undefined;
  const deps: ServiceDeps = {
    db: database.db,
    ids: options.ids ?? randomIds,
    clock: options.clock ?? (() => new Date()),
    secrets: new SecretBox(options.secretKey),
    onAccessChange: () => principals?.clear(),
  };
  const identity = new IdentityService(deps);
  const organizations = new OrganizationService(deps, identity);
  const projects = new ProjectService(deps, identity);
  const metricsTokens = new MetricsTokenService(deps);
  const access = new ServiceAccess(deps.db);
  const applications = new ApplicationService(deps, access, projects, identity);
  principals = new PrincipalCache((hash) => identity.principalByKeyHash(hash));

  let openApi: Record<string, unknown> | undefined;
  const openApiDocument = () => (openApi ??= buildOpenApiDocument(options.version));

  const handlers: AllHandlers = {
    project: projectHandlers(projects),
    environment: environmentHandlers(projects),
    organization: organizationHandlers(organizations),
    user: userHandlers(identity, organizations, metricsTokens),
    notification: notificationHandlers(metricsTokens),
    application: applicationHandlers(applications),
    settings: settingsHandlers({ version: options.version, openApiDocument }),
  };

  const app = createApp({
    handlers,
    principals,
    log: options.log,
    openApiDocument,
    checkHealth: async () => {
      await sql`select 1`.execute(database.db);
    },
    validateOutput: options.validateOutput,
  });

  return { app, database, identity, organizations, projects, secrets: deps.secrets, close: () => database.close() };
}

export type Platform = Awaited<ReturnType<typeof buildPlatform>>;
