import type { Client } from './client.js';
import { contractsByName } from '@skiff/contracts';
import { refused, usage } from './errors.js';

export interface Workload {
  id: string;
  type: 'application' | 'compose' | 'cache' | 'database';
  name: string;
  appName: string;
  applicationStatus: string;
  serverId: string | null;
  project: string;
  projectId: string;
  environment: string;
  environmentId: string;
}

interface ProjectTree {
  projectId: string;
  name: string;
  environments: Array<{ environmentId: string; name: string; services: Array<Omit<Workload, 'project' | 'projectId' | 'environment' | 'environmentId'>> }>;
}

export const op = (name: string) => {
  const c = contractsByName.get(name);
  if (!c) throw new Error(`no operation ${name}`);
  return c;
};

export async function projectTrees(client: Client): Promise<ProjectTree[]> {
  return client.call<ProjectTree[]>(op('project.all'), {});
}

export async function allWorkloads(client: Client): Promise<Workload[]> {
  return (await projectTrees(client)).flatMap((p) =>
    p.environments.flatMap((e) =>
      e.services.map((s) => ({ ...s, project: p.name, projectId: p.projectId, environment: e.name, environmentId: e.environmentId })),
    ),
  );
}

/**
 * A workload by id, name or app name (`project/environment/name` when a name is not unique),
 * among the kinds given.
 */
export async function findWorkload(client: Client, ref: string, kinds: Workload['type'][]): Promise<Workload> {
  const all = (await allWorkloads(client)).filter((w) => kinds.includes(w.type));
  const byId = all.find((w) => w.id === ref);
  if (byId) return byId;
  const parts = ref.split('/');
  const name = parts.at(-1)!;
  const matches = all.filter(
    (w) =>
      (w.name === name || w.appName === name) &&
      (parts.length < 2 || w.environment === parts.at(-2)) &&
      (parts.length < 3 || w.project === parts.at(-3)),
  );
  if (matches.length === 1) return matches[0]!;
  if (!matches.length) throw refused(`no ${kinds.join(' or ')} named or numbered "${ref}"`);
  throw usage(
    `"${ref}" names ${matches.length} workloads; give its id or project/environment/name:\n` +
      matches.map((w) => `  ${w.id}  ${w.project}/${w.environment}/${w.name}`).join('\n'),
  );
}
