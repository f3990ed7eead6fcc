// The reads of projects and environments, compiled once (named prepared statements on PostgreSQL).
import type { Db, Environment, Project } from '@skiff/db';
import { PROJECT_COLUMNS } from '../shared/columns.js';
import { compiledOnce } from '../shared/compiled-once.js';

/** Projects with their environments, one row each (a project without one: a row of nulls for it). */
const withEnvironmentsQuery = (db: Db) =>
  db
    .selectFrom('projects as p')
    .leftJoin('environments as e', 'e.projectId', 'p.id')
    .select(['p.id', 'p.organizationId', 'p.name', 'p.description', 'p.env', 'p.createdAt'])
    .select(['e.id as environmentId', 'e.name as environmentName', 'e.description as environmentDescription', 'e.env as environmentEnv', 'e.createdAt as environmentCreatedAt']);
/** project.one's two statements (compiled once: the hottest read). */
export const projectWithEnvironments = compiledOnce(['projectId'], (db: Db, slot) => withEnvironmentsQuery(db).where('p.id', '=', slot.projectId).orderBy('e.createdAt'));
/** project.all's first statement: the same for every project of the organization, however many. */
export const projectsOfOrganization = compiledOnce(['organizationId'], (db: Db, slot) =>
  withEnvironmentsQuery(db).where('p.organizationId', '=', slot.organizationId).orderBy('p.createdAt').orderBy('e.createdAt'),
);
/** An environment with its project: every operation on an environment finds it so. */
export const environmentWithProject = compiledOnce(['environmentId'], (db: Db, slot) => withEnvironmentsQuery(db).where('e.id', '=', slot.environmentId));
export const projectById = compiledOnce(['projectId'], (db: Db, slot) => db.selectFrom('projects').select(PROJECT_COLUMNS).where('id', '=', slot.projectId));
type ProjectRow = Awaited<ReturnType<typeof projectWithEnvironments>>[number];

/** Rows of `withEnvironmentsQuery` as projects with their environments, in the rows' order. */
export function grouped(rows: ProjectRow[]): { project: Project; environments: Environment[] }[] {
  const byId = new Map<string, { project: Project; environments: Environment[] }>();
  for (const r of rows) {
    let entry = byId.get(r.id);
    if (!entry) {
      entry = { project: { id: r.id, organizationId: r.organizationId, name: r.name, description: r.description, env: r.env, createdAt: r.createdAt }, environments: [] };
      byId.set(r.id, entry);
    }
    if (r.environmentId !== null) {
      entry.environments.push({ id: r.environmentId, projectId: r.id, name: r.environmentName!, description: r.environmentDescription ?? null, env: r.environmentEnv!, createdAt: r.environmentCreatedAt! });
    }
  }
  return [...byId.values()];
}
