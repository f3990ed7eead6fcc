import type { Client } from '../client.js';
import { refused } from '../errors.js';
import { op, projectTrees } from '../workloads.js';
import { DOMAIN_FIELDS, type DomainEntry, KINDS, type KindKey, type ProjectFile, envForFile, settingNames } from './model.js';

type Rec = Record<string, unknown>;

/** One workload as the platform has it: its record and domains, for export and for comparison. */
export interface LiveWorkload {
  id: string;
  record: Rec;
  domains: Rec[];
}

export interface LiveEnvironment {
  environmentId: string;
  name: string;
  description: string | null;
  env: string;
  workloads: Record<KindKey, LiveWorkload[]>;
}

export interface LiveProject {
  projectId: string;
  name: string;
  description: string | null;
  env: string;
  environments: LiveEnvironment[];
}

export async function readProject(client: Client, ref: string): Promise<LiveProject | null> {
  const trees = await projectTrees(client);
  const tree = trees.find((p) => p.projectId === ref) ?? trees.find((p) => p.name === ref);
  if (!tree) return null;
  const project = await client.call<{ projectId: string; name: string; description: string | null; env: string }>(op('project.one'), { projectId: tree.projectId });
  const environments: LiveEnvironment[] = [];
  for (const e of tree.environments) {
    const env = await client.call<{ description: string | null; env: string }>(op('environment.one'), { environmentId: e.environmentId });
    const workloads = { applications: [], compose: [], caches: [] } as Record<KindKey, LiveWorkload[]>;
    for (const kind of Object.keys(KINDS) as KindKey[]) {
      const spec = KINDS[kind];
      for (const s of e.services.filter((x) => x.type === spec.type)) {
        const record = await client.call<Rec>(op(spec.one), { [spec.id]: s.id });
        const domains = spec.domains ? await client.call<Rec[]>(op(spec.domains), { [spec.id]: s.id }) : [];
        workloads[kind].push({ id: s.id, record, domains });
      }
    }
    environments.push({ environmentId: e.environmentId, name: e.name, description: env.description, env: env.env, workloads });
  }
  return { projectId: project.projectId, name: project.name, description: project.description, env: project.env, environments };
}

export function domainEntry(d: Rec): DomainEntry {
  const entry: Rec = {};
  for (const f of DOMAIN_FIELDS) if (d[f] !== null && d[f] !== undefined) entry[f] = d[f];
  return entry as DomainEntry;
}

/** The file for a project: no ids, no secrets (secret-looking env names are listed with a null value). */
export function projectFile(p: LiveProject): ProjectFile {
  const clean = <T extends Rec>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
  return {
    skiff: 1,
    project: clean({ name: p.name, description: p.description, env: envForFile(p.env) }),
    environments: p.environments.map((e) => {
      const out: Rec = clean({ name: e.name, description: e.description, env: envForFile(e.env) });
      for (const kind of Object.keys(KINDS) as KindKey[]) {
        if (!e.workloads[kind].length) continue;
        out[kind] = e.workloads[kind].map(({ record, domains }) => {
          const settings = Object.fromEntries(settingNames(kind, record).filter((n) => record[n] !== null).map((n) => [n, record[n]]));
          return clean({
            name: record.name as string,
            appName: record.appName as string,
            description: record.description as string | null,
            settings: Object.keys(settings).length ? settings : undefined,
            env: envForFile(record.env as string | null),
            domains: kind === 'caches' || !domains.length ? undefined : domains.map(domainEntry),
          });
        });
      }
      return out as ProjectFile['environments'][number];
    }),
  };
}

export async function exportProject(client: Client, ref: string): Promise<ProjectFile> {
  const live = await readProject(client, ref);
  if (!live) throw refused(`no project named or numbered "${ref}"`);
  return projectFile(live);
}
