import { type Api, ok } from './api.js';

export type Kind = 'application' | 'compose' | 'cache' | 'database';
export type Action = 'deploy' | 'redeploy' | 'stop' | 'start';

export interface Workload {
  name: string;
  appName: string;
  applicationStatus: string;
  env: string | null;
  description: string | null;
}

export interface Deployment {
  deploymentId: string;
  status: string;
  title: string | null;
  reason: string | null;
  createdAt: string;
}

export interface Domain {
  domainId: string;
  host: string;
  path: string;
  https: boolean;
  certificateType: string;
  enabled: boolean;
}

/** What the workload page does for one kind, through that kind's public operations. */
export interface WorkloadOps {
  one(): Promise<Workload>;
  act(action: Action): Promise<unknown>;
  saveEnv(env: string): Promise<unknown>;
  deployments?(): Promise<Deployment[]>;
  domains?(): Promise<Domain[]>;
}

export function workloadOps(api: Api, kind: Kind, id: string): WorkloadOps | null {
  if (kind === 'application') {
    const body = { applicationId: id };
    return {
      one: () => ok(api.GET('/api/application.one', { params: { query: body } })),
      act: (a) => ok(api.POST(`/api/application.${a}`, { body })),
      saveEnv: (env) => ok(api.POST('/api/application.update', { body: { ...body, env } })),
      deployments: () => ok(api.GET('/api/deployment.all', { params: { query: body } })),
      domains: () => ok(api.GET('/api/domain.byApplicationId', { params: { query: body } })),
    };
  }
  if (kind === 'compose') {
    const body = { composeId: id };
    return {
      one: () => ok(api.GET('/api/compose.one', { params: { query: body } })),
      act: (a) => ok(api.POST(`/api/compose.${a}`, { body })),
      saveEnv: (env) => ok(api.POST('/api/compose.update', { body: { ...body, env } })),
      deployments: () => ok(api.GET('/api/deployment.allByCompose', { params: { query: body } })),
      domains: () => ok(api.GET('/api/domain.byComposeId', { params: { query: body } })),
    };
  }
  if (kind === 'cache') {
    const body = { cacheId: id };
    return {
      one: () => ok(api.GET('/api/cache.one', { params: { query: body } })),
      act: (a) => ok(api.POST(`/api/cache.${a === 'redeploy' ? 'rebuild' : a}`, { body })),
      saveEnv: (env) => ok(api.POST('/api/cache.saveEnvironment', { body: { ...body, env } })),
    };
  }
  // Database services (dbA..dbE) are served by one router per engine: pages/database.tsx.
  return null;
}
