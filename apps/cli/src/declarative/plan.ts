import { randomBytes } from 'node:crypto';
import type { Client } from '../client.js';
import { type Issue, usage } from '../errors.js';
import { fieldsOf, kebab } from '../fields.js';
import { checkInput } from '../operations.js';
import { op } from '../workloads.js';
import { type DomainEntry, KINDS, KIND_KEYS, type KindKey, type ProjectFile, type WorkloadEntry, envFields, mergedEnv } from './model.js';
import { type LiveEnvironment, type LiveWorkload, readProject } from './read.js';

type Rec = Record<string, unknown>;

/** Ids known only once the parent is created (a new project's environments, a new workload's domains). */
type Ids = Map<string, string>;

export interface Action {
  verb: 'create' | 'update';
  what: string;
  /** For updates: the fields that change. */
  fields: string[];
  /** Said beside the action (a password generated for it). */
  note?: string;
  run(client: Client, ids: Ids): Promise<void>;
}

export interface Plan {
  actions: Action[];
  /** What the platform has and the file does not name: left as it is. */
  left: string[];
  /** What the file asks for and cannot be done from it (a secret with no value anywhere). */
  warnings: string[];
}

const canon = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x));
const same = (a: unknown, b: unknown) => canon(a ?? null) === canon(b ?? null);
const PLACEHOLDER = 'id_pending';

/** Reads the platform and works out what makes it match the file; changes nothing. */
export async function planApply(client: Client, file: ProjectFile): Promise<Plan> {
  const plan: Plan = { actions: [], left: [], warnings: [] };
  const issues: Issue[] = [];
  const checked = (operation: string, input: Rec, where: string) => {
    for (const i of checkInput(op(operation), input)) issues.push({ path: `${where}.${i.path}`, message: i.message });
    return input;
  };
  const envText = (current: string, wanted: Record<string, string | null> | undefined, where: string, field = 'env') => {
    if (!wanted) return current;
    const merged = mergedEnv(current, wanted);
    const how = field === 'env' ? 'skiff env push sets it' : `its update operation's --${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} sets it`;
    for (const key of merged.unset) plan.warnings.push(`${where}: ${field} ${key} has no value in the file nor on the platform (${how})`);
    for (const key of merged.kept) plan.left.push(`${where}: ${field} ${key}`);
    return merged.text;
  };

  const live = await readProject(client, file.project.name);
  const p = file.project;
  const projectKey = 'project';
  if (!live) {
    const input = checked('project.create', { name: p.name, ...(p.description !== undefined ? { description: p.description } : {}), env: envText('', p.env, 'project') }, 'project');
    plan.actions.push({
      verb: 'create',
      what: `project ${p.name}`,
      fields: [],
      async run(c, ids) {
        const created = await c.call<{ projectId: string; environments: Array<{ environmentId: string; name: string }> }>(op('project.create'), input);
        ids.set(projectKey, created.projectId);
        for (const e of created.environments) ids.set(`env:${e.name}`, e.environmentId);
      },
    });
  } else {
    const changes: Rec = {};
    if (p.description !== undefined && !same(p.description, live.description)) changes.description = p.description;
    const env = envText(live.env, p.env, 'project');
    if (env !== live.env) changes.env = env;
    if (Object.keys(changes).length) {
      const input = checked('project.update', { projectId: live.projectId, ...changes }, 'project');
      plan.actions.push({ verb: 'update', what: `project ${p.name}`, fields: Object.keys(changes), run: async (c) => void (await c.call(op('project.update'), input)) });
    }
  }

  const liveEnvs = live?.environments ?? [];
  file.environments.forEach((e, ei) => {
    const where = `environments.${ei}`;
    const existing: LiveEnvironment | undefined = liveEnvs.find((x) => x.name === e.name);
    const envKey = `env:${e.name}`;
    // A new project comes with "production": the file's "production" is that one.
    const comesWithProject = !live && e.name === 'production';
    if (!existing) {
      if (!comesWithProject) {
        const input = checked('environment.create', { name: e.name, ...(e.description != null ? { description: e.description } : {}), projectId: live?.projectId ?? PLACEHOLDER }, where);
        plan.actions.push({
          verb: 'create',
          what: `environment ${e.name}`,
          fields: [],
          async run(c, ids) {
            const created = await c.call<{ environmentId: string }>(op('environment.create'), { ...input, projectId: live?.projectId ?? ids.get(projectKey) });
            ids.set(envKey, created.environmentId);
          },
        });
      }
      const changes: Rec = {};
      if (comesWithProject && e.description != null) changes.description = e.description;
      const env = envText('', e.env, where);
      if (env) changes.env = env;
      if (Object.keys(changes).length) {
        checked('environment.update', { environmentId: PLACEHOLDER, ...changes }, where);
        plan.actions.push({ verb: 'update', what: `environment ${e.name}`, fields: Object.keys(changes), run: async (c, ids) => void (await c.call(op('environment.update'), { environmentId: ids.get(envKey), ...changes })) });
      }
    } else {
      const changes: Rec = {};
      if (e.description !== undefined && !same(e.description, existing.description)) changes.description = e.description ?? '';
      const env = envText(existing.env, e.env, where);
      if (env !== existing.env) changes.env = env;
      if (Object.keys(changes).length) {
        const input = checked('environment.update', { environmentId: existing.environmentId, ...changes }, where);
        plan.actions.push({ verb: 'update', what: `environment ${e.name}`, fields: Object.keys(changes), run: async (c) => void (await c.call(op('environment.update'), input)) });
      }
    }
    const environmentId = (ids: Ids) => existing?.environmentId ?? ids.get(envKey)!;
    for (const kind of KIND_KEYS) {
      const spec = KINDS[kind];
      const list = (e[spec.list] ?? []) as Array<WorkloadEntry & { engine?: string }>;
      const entries = list.flatMap((w, wi) => (spec.engine && w.engine !== spec.engine ? [] : [{ w, wi }]));
      const lives = existing?.workloads[kind] ?? [];
      for (const { w, wi } of entries) planWorkload(plan, checked, envText, kind, w, lives, environmentId, `${where}.${spec.list}.${wi}`, e.name);
      for (const l of lives) {
        if (!entries.some(({ w }) => matches(w, l))) plan.left.push(`${spec.type} ${l.record.name} (${e.name}), not in the file`);
      }
    }
  });
  for (const l of liveEnvs) if (!file.environments.some((e) => e.name === l.name)) plan.left.push(`environment ${l.name}, not in the file`);
  if (issues.length) throw usage('the file asks for what the platform would refuse; nothing was changed', issues);
  return plan;
}

const matches = (w: WorkloadEntry, l: LiveWorkload) => (w.appName ? l.record.appName === w.appName : l.record.name === w.name);

function planWorkload(
  plan: Plan,
  checked: (operation: string, input: Rec, where: string) => Rec,
  envText: (current: string, wanted: Record<string, string | null> | undefined, where: string, field?: string) => string,
  kind: KindKey,
  w: WorkloadEntry,
  lives: LiveWorkload[],
  environmentId: (ids: Ids) => string,
  where: string,
  envName: string,
): void {
  const spec = KINDS[kind];
  const label = `${spec.type} ${w.name} (${envName})`;
  const key = `${kind}:${envName}:${w.appName ?? w.name}`;
  const existing = lives.find((l) => matches(w, l));
  const wanted: Rec = { ...(w.settings ?? {}), name: w.name, ...(w.appName ? { appName: w.appName } : {}), ...(w.description !== undefined ? { description: w.description } : {}) };
  if (!existing) {
    const createFields = new Set(fieldsOf(op(spec.create).input).map((f) => f.name));
    const create: Rec = Object.fromEntries(Object.entries(wanted).filter(([k]) => createFields.has(k)));
    const rest: Rec = Object.fromEntries(Object.entries(wanted).filter(([k]) => !createFields.has(k)));
    for (const f of envFields(kind)) {
      const text = envText('', w[f], where, f);
      if (text) rest[f] = text;
    }
    const note = createPassword(kind, create);
    checked(spec.create, { ...create, environmentId: PLACEHOLDER }, where);
    if (Object.keys(rest).length) checked(spec.update, { [spec.id]: PLACEHOLDER, ...rest }, where);
    plan.actions.push({
      verb: 'create',
      what: label,
      fields: Object.keys(rest),
      note,
      async run(c, ids) {
        const created = await c.call<Rec>(op(spec.create), { ...create, environmentId: environmentId(ids) });
        ids.set(key, created[spec.id] as string);
        if (Object.keys(rest).length) await c.call(op(spec.update), { [spec.id]: created[spec.id], ...rest });
      },
    });
  } else {
    const changes: Rec = {};
    for (const [k, v] of Object.entries(wanted)) if (!same(v, existing.record[k])) changes[k] = v;
    for (const f of envFields(kind)) {
      const current = (existing.record[f] as string | null) ?? '';
      const text = envText(current, w[f], where, f);
      if (text !== current) changes[f] = text;
    }
    if (Object.keys(changes).length) {
      const input = checked(spec.update, { [spec.id]: existing.id, ...changes }, where);
      plan.actions.push({ verb: 'update', what: label, fields: Object.keys(changes), run: async (c) => void (await c.call(op(spec.update), input)) });
    }
  }
  if (!spec.domains) return;
  const liveDomains = existing?.domains ?? [];
  (w.domains ?? []).forEach((d, di) => planDomain(plan, checked, kind, d, liveDomains, key, existing?.id, `${where}.domains.${di}`, label));
  for (const l of liveDomains) {
    if (!(w.domains ?? []).some((d) => sameRoute(d, l))) plan.left.push(`domain ${l.host}${l.path ?? '/'} of ${label}, not in the file`);
  }
}

/**
 * A new cache needs a password and the file never holds one: a random one is generated (never
 * printed); a database's are generated by the platform. Answers what to say about it.
 */
function createPassword(kind: KindKey, create: Rec): string | undefined {
  const spec = KINDS[kind];
  if (spec.type === 'cache') {
    create.databasePassword = randomBytes(24).toString('base64url');
    return `a random databasePassword (192 bits) is generated; it is never shown: set your own with skiff cache update --cache-id <id> --database-password <password>`;
  }
  if (spec.type === 'database') {
    return `the platform generates its passwords; they are never shown: set your own with skiff ${kind} update --${kebab(spec.id)} <id> --database-password <password>`;
  }
  return undefined;
}

const sameRoute = (d: DomainEntry, l: Rec) => d.host.toLowerCase() === l.host && (d.path ?? '/') === (l.path ?? '/');

function planDomain(
  plan: Plan,
  checked: (operation: string, input: Rec, where: string) => Rec,
  kind: KindKey,
  d: DomainEntry,
  lives: Rec[],
  workloadKey: string,
  workloadId: string | undefined,
  where: string,
  label: string,
): void {
  const owner = KINDS[kind].id;
  const existing = lives.find((l) => sameRoute(d, l));
  const { enabled, ...route } = d;
  if (!existing) {
    checked('domain.create', { ...route, [owner]: PLACEHOLDER }, where);
    plan.actions.push({
      verb: 'create',
      what: `domain ${d.host}${d.path ?? '/'} of ${label}`,
      fields: [],
      async run(c, ids) {
        const created = await c.call<{ domainId: string }>(op('domain.create'), { ...route, [owner]: workloadId ?? ids.get(workloadKey) });
        if (enabled === false) await c.call(op('domain.update'), { domainId: created.domainId, host: d.host, enabled });
      },
    });
    return;
  }
  const changes: Rec = {};
  for (const [k, v] of Object.entries(d)) if (k !== 'host' && !same(v, existing[k])) changes[k] = v;
  if (!Object.keys(changes).length) return;
  const input = checked('domain.update', { domainId: existing.domainId, host: existing.host, ...changes }, where);
  plan.actions.push({ verb: 'update', what: `domain ${d.host}${d.path ?? '/'} of ${label}`, fields: Object.keys(changes), run: async (c) => void (await c.call(op('domain.update'), input)) });
}

export async function runPlan(client: Client, plan: Plan, onAction: (a: Action) => void): Promise<void> {
  const ids: Ids = new Map();
  for (const action of plan.actions) {
    onAction(action);
    await action.run(client, ids);
  }
}
