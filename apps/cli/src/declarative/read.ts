import type { Client } from '../client.js';
import { CliError, refused } from '../errors.js';
import { op, projectTrees } from '../workloads.js';
import { DOMAIN_FIELDS, type DomainEntry, KINDS, KIND_KEYS, type KindKey, type ProjectFile, envFields, envForFile, settingNames } from './model.js';

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
    const workloads = Object.fromEntries(KIND_KEYS.map((k) => [k, []])) as unknown as Record<KindKey, LiveWorkload[]>;
    for (const s of e.services) {
      const found = await readWorkload(client, s.type, s.id);
      if (found) workloads[found.kind].push(found.live);
    }
    environments.push({ environmentId: e.environmentId, name: e.name, description: env.description, env: env.env, workloads });
  }
  return { projectId: project.projectId, name: project.name, description: project.description, env: project.env, environments };
}

/** A workload's record and domains; a database's router is the one that knows its id (the summary does not say its engine). */
async function readWorkload(client: Client, type: string, id: string): Promise<{ kind: KindKey; live: LiveWorkload } | null> {
  for (const kind of KIND_KEYS.filter((k) => KINDS[k].type === type)) {
    const spec = KINDS[kind];
    let record: Rec;
    try {
      record = await client.call<Rec>(op(spec.one), { [spec.id]: id });
    } catch (err) {
      if (spec.type === 'database' && err instanceof CliError && /^NOT_FOUND/.test(err.message)) continue;
      throw err;
    }
    const domains = spec.domains ? await client.call<Rec[]>(op(spec.domains), { [spec.id]: id }) : [];
    return { kind, live: { id, record, domains } };
  }
  return null;
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
      for (const kind of KIND_KEYS) {
        const spec = KINDS[kind];
        if (!e.workloads[kind].length) continue;
        const entries = e.workloads[kind].map(({ record, domains }) => {
          const settings = Object.fromEntries(settingNames(kind, record).filter((n) => record[n] !== null).map((n) => [n, record[n]]));
          return clean({
            name: record.name as string,
            appName: record.appName as string,
            ...(spec.engine ? { engine: spec.engine } : {}),
            description: record.description as string | null,
            settings: Object.keys(settings).length ? settings : undefined,
            ...Object.fromEntries(envFields(kind).map((f) => [f, envForFile(record[f] as string | null)])),
            domains: !spec.domains || !domains.length ? undefined : domains.map(domainEntry),
          });
        });
        out[spec.list] = [...((out[spec.list] as Rec[] | undefined) ?? []), ...entries];
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
