import type { Db, Environment, Project } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import {
  assertEnvironment,
  assertProject,
  canSeeEnvironment,
  canSeeProject,
  canSeeService,
  requireGrant,
} from '../../authz/policy.js';
import { Invalid, NotFound } from '../../errors.js';
import { type ServiceDeps, givenColumns, iso, uniqueAs } from '../shared/deps.js';
import type { IdentityService } from '../identity/identity.js';
import { type KeptItem, keptAfterRemoval } from './kept-after-removal.js';
import { type ServiceKind, type ServiceSummary, type WorkloadRemovals, copyServices, countServices, servicesOf, servicesQuery, summaries } from '../shared/service-records.js';
import { sql } from 'kysely';
import { compiledOnce } from '../shared/compiled-once.js';
import { environmentWithProject, grouped, projectById, projectWithEnvironments, projectsOfOrganization } from './project-reads.js';

const DEFAULT_ENVIRONMENT = 'production';

/** project.create's statement: the project and its first environment. */
const projectAndEnvironment = compiledOnce(['id', 'organizationId', 'name', 'description', 'env', 'environmentId', 'environmentEnv'], (db: Db, slot) =>
  db
    .with('p', (w) => w.insertInto('projects').values({ id: slot.id, organizationId: slot.organizationId, name: slot.name, description: slot.description, env: slot.env }).returning('id'))
    .insertInto('environments')
    .columns(['id', 'projectId', 'name', 'description', 'env'])
    .expression((eb) =>
      eb.selectFrom('p').select([eb.val(slot.environmentId).as('id'), 'p.id', eb.val(DEFAULT_ENVIRONMENT).as('name'), sql<null>`null`.as('description'), eb.val(slot.environmentEnv).as('env')]),
    )
    .returning(['id', 'projectId', 'name', 'description', 'env', 'createdAt']),
);
const servicesOfProject = compiledOnce(['projectId'], (db: Db, slot) =>
  servicesQuery(db, db.selectFrom('environments').select('id').where('projectId', '=', slot.projectId)),
);
const ENVIRONMENT_NAME_TAKEN = 'an environment with this name exists in the project';

/** Projects and their environments, with the services a caller may see inside them. */
export class ProjectService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly identity: IdentityService,
    private readonly workloads: WorkloadRemovals,
  ) {}

  /**
   * Deletes with `remove`, after queueing the removal of the environments' workloads (their
   * volumes when `deleteVolumes`), and queues the proxy configuration of the servers that
   * routed to them; then deletes the files of the removed applications' archives. Answers
   * what stays on the servers.
   */
  private async removeWithWorkloads(
    environmentIds: string[],
    remove: (tx: Db) => Promise<unknown>,
    field: string,
    deleteVolumes: boolean,
  ): Promise<KeptItem[]> {
    const { queued, routes } = await this.db.transaction().execute(async (tx) => {
      const queued = await this.workloads.queueRemovals(tx, environmentIds, { removeVolumes: deleteVolumes });
      return { queued, routes: await this.workloads.removeRoutes(tx, { environmentIds }, () => remove(tx), field) };
    });
    if (queued.length + routes > 0) this.workloads.notify();
    await this.workloads.removeArchiveFiles();
    return keptAfterRemoval(queued);
  }

  private get db() {
    return this.deps.db;
  }

  private seal = (env: string | undefined) => this.deps.secrets.seal(env ?? '');

  projectRecord = (p: Project) => ({
    projectId: p.id,
    organizationId: p.organizationId,
    name: p.name,
    description: p.description,
    env: this.deps.secrets.open(p.env),
    createdAt: iso(p.createdAt),
  });

  environmentRecord = (e: Environment) => ({
    environmentId: e.id,
    projectId: e.projectId,
    name: e.name,
    description: e.description,
    env: this.deps.secrets.open(e.env),
    createdAt: iso(e.createdAt),
  });

  /** Environments with their visible services, for the projects given. */
  private async withEnvironments(p: Principal, projects: Project[]) {
    if (projects.length === 0) return [];
    const environments = await this.db
      .selectFrom('environments')
      .selectAll()
      .where('projectId', 'in', projects.map((x) => x.id))
      .orderBy('createdAt')
      .execute();
    const visible = environments.filter((e) => canSeeEnvironment(p, e.projectId, e.id));
    const services = await servicesOf(this.db, visible.map((e) => e.id));
    return projects.map((project) => ({
      ...this.projectRecord(project),
      environments: visible
        .filter((e) => e.projectId === project.id)
        .map((e) => this.withServices(p, e, services)),
    }));
  }

  private withServices(p: Principal, e: Environment, services: ServiceSummary[]) {
    return {
      ...this.environmentRecord(e),
      services: services
        .filter((s) => s.environmentId === e.id && canSeeService(p, s, e.projectId))
        .map(({ environmentId: _e, ...s }) => s),
    };
  }

  async findProject(p: Principal, projectId: string): Promise<Project> {
    const [project] = await projectById(this.db, { projectId });
    if (!project) throw NotFound('No such project');
    assertProject(p, project);
    return project;
  }

  async findEnvironment(p: Principal, environmentId: string): Promise<{ environment: Environment; project: Project }> {
    const [found] = grouped(await environmentWithProject(this.db, { environmentId }));
    const environment = found?.environments[0];
    if (!found || !environment) throw NotFound('No such environment');
    assertEnvironment(p, found.project, environment.id);
    return { environment, project: found.project };
  }

  /** One statement makes both rows (the answer is built from them: a new project has no services). */
  async create(p: Principal, input: { name: string; description?: string | null; env?: string }) {
    const values = { id: this.deps.ids('prj'), organizationId: p.organizationId, name: input.name, description: input.description ?? null, env: this.seal(input.env) };
    const [environment] = await projectAndEnvironment(this.db, { ...values, environmentId: this.deps.ids('env'), environmentEnv: this.seal('') });
    if (!environment) throw new Error('project.create: no environment row returned');
    await this.identity.grantCreated(p, { projects: [values.id], environments: [environment.id] });
    // Both rows were made by one statement: the same transaction time.
    return this.withRows(p, { ...values, createdAt: environment.createdAt }, [environment], []);
  }

  /**
   * The project with its environments (one statement), then their services (one more). One
   * statement aggregating both as JSON costs PGlite twice as much: its planning and JSON.
   */
  async one(p: Principal, projectId: string) {
    const [found] = grouped(await projectWithEnvironments(this.db, { projectId }));
    if (!found) throw NotFound('No such project');
    assertProject(p, found.project);
    return this.withRows(p, found.project, found.environments, summaries(await servicesOfProject(this.db, { projectId })));
  }

  private withRows(p: Principal, project: Project, environments: Environment[], services: ServiceSummary[]) {
    return {
      ...this.projectRecord(project),
      environments: environments.filter((e) => canSeeEnvironment(p, e.projectId, e.id)).map((e) => this.withServices(p, e, services)),
    };
  }

  /** Two statements whatever the number of projects: the projects with their environments, then the services of those visible. */
  async all(p: Principal) {
    const projects = grouped(await projectsOfOrganization(this.db, { organizationId: p.organizationId })).filter((x) => canSeeProject(p, x.project.id));
    const visible = projects.flatMap((x) => x.environments).filter((e) => canSeeEnvironment(p, e.projectId, e.id));
    const services = await servicesOf(this.db, visible.map((e) => e.id));
    return projects.map((x) => this.withRows(p, x.project, x.environments, services));
  }

  async update(
    p: Principal,
    input: { projectId: string; name?: string; description?: string | null; organizationId?: string; env?: string },
  ) {
    const project = await this.findProject(p, input.projectId);
    if (input.organizationId !== undefined && input.organizationId !== p.organizationId) {
      throw Invalid('organizationId', 'moving a project to another organization is not supported');
    }
    const columns = givenColumns({
      name: input.name,
      description: input.description,
      env: input.env === undefined ? undefined : this.seal(input.env),
    });
    if (Object.keys(columns).length === 0) return this.projectRecord(project);
    const row = await this.db
      .updateTable('projects')
      .set(columns)
      .where('id', '=', input.projectId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.projectRecord(row);
  }

  async remove(p: Principal, projectId: string, { deleteVolumes = false }: { deleteVolumes?: boolean } = {}) {
    const project = await this.findProject(p, projectId);
    const environments = await this.db.selectFrom('environments').select('id').where('projectId', '=', projectId).execute();
    const counts = await countServices(this.db, environments.map((e) => e.id));
    const kept = await this.removeWithWorkloads(
      environments.map((e) => e.id),
      (tx) => tx.deleteFrom('projects').where('id', '=', projectId).execute(),
      'projectId',
      deleteVolumes,
    );
    return { project: this.projectRecord(project), removed: { environments: environments.length, ...counts }, kept };
  }

  async createEnvironment(p: Principal, input: { projectId: string; name: string; description?: string }) {
    await this.findProject(p, input.projectId);
    const environmentId = this.deps.ids('env');
    const row = await this.insertEnvironment(this.db, {
      id: environmentId,
      projectId: input.projectId,
      name: input.name,
      description: input.description ?? null,
      env: this.seal(''),
    });
    await this.identity.grantCreated(p, { environments: [environmentId] });
    return this.environmentRecord(row);
  }

  private insertEnvironment(db: Db, values: Omit<Environment, 'createdAt'>) {
    return uniqueAs('name', ENVIRONMENT_NAME_TAKEN, () => db.insertInto('environments').values(values).returningAll().executeTakeFirstOrThrow());
  }

  async environment(p: Principal, environmentId: string) {
    const { environment } = await this.findEnvironment(p, environmentId);
    const services = await servicesOf(this.db, [environment.id]);
    return this.withServices(p, environment, services);
  }

  async environmentsOf(p: Principal, projectId: string) {
    const project = await this.findProject(p, projectId);
    const [result] = await this.withEnvironments(p, [project]);
    return result!.environments;
  }

  async updateEnvironment(
    p: Principal,
    input: { environmentId: string; name?: string; description?: string; projectId?: string; env?: string },
  ) {
    const { environment } = await this.findEnvironment(p, input.environmentId);
    if (input.projectId !== undefined && input.projectId !== environment.projectId) {
      const target = await this.db.selectFrom('projects').selectAll().where('id', '=', input.projectId).executeTakeFirst();
      if (!target || target.organizationId !== p.organizationId) throw Invalid('projectId', 'no such project');
      if (!canSeeProject(p, target.id)) throw Invalid('projectId', 'no access to this project');
    }
    const columns = givenColumns({
      name: input.name,
      description: input.description,
      projectId: input.projectId,
      env: input.env === undefined ? undefined : this.seal(input.env),
    });
    if (Object.keys(columns).length === 0) return this.environmentRecord(environment);
    const row = await uniqueAs('name', ENVIRONMENT_NAME_TAKEN, () =>
      this.db
        .updateTable('environments')
        .set(columns)
        .where('id', '=', input.environmentId)
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return this.environmentRecord(row);
  }

  async removeEnvironment(p: Principal, environmentId: string, { deleteVolumes = false }: { deleteVolumes?: boolean } = {}) {
    const { environment } = await this.findEnvironment(p, environmentId);
    const siblings = await this.db
      .selectFrom('environments')
      .select('id')
      .where('projectId', '=', environment.projectId)
      .execute();
    if (siblings.length <= 1) {
      throw Invalid('environmentId', "a project keeps at least one environment; remove the project instead");
    }
    const counts = await countServices(this.db, [environmentId]);
    const kept = await this.removeWithWorkloads(
      [environmentId],
      (tx) => tx.deleteFrom('environments').where('id', '=', environmentId).execute(),
      'environmentId',
      deleteVolumes,
    );
    return { environment: this.environmentRecord(environment), removed: { environments: 1, ...counts }, kept };
  }

  /** `environment.duplicate`: a copy in the same project, with every service. */
  async duplicateEnvironment(p: Principal, input: { environmentId: string; name: string; description?: string }) {
    const { environment } = await this.findEnvironment(p, input.environmentId);
    const { environmentId, serviceIds } = await this.db.transaction().execute(async (trx) => {
      const id = this.deps.ids('env');
      await this.insertEnvironment(trx, {
        id,
        projectId: environment.projectId,
        name: input.name,
        description: input.description ?? environment.description,
        env: environment.env,
      });
      return { environmentId: id, serviceIds: await copyServices(trx, this.deps.ids, environment.id, id) };
    });
    await this.identity.grantCreated(p, { environments: [environmentId], services: serviceIds });
    return this.environment(p, environmentId);
  }

  /** `project.duplicate`: the source environment copied into a new project, or beside itself. */
  async duplicate(
    p: Principal,
    input: {
      sourceEnvironmentId: string;
      name: string;
      description?: string;
      includeServices: boolean;
      selectedServices?: { id: string; type: ServiceKind }[];
      duplicateInSameProject: boolean;
    },
  ) {
    if (input.name.trim() === '') throw Invalid('name', 'must not be empty');
    const { environment, project } = await this.findEnvironment(p, input.sourceEnvironmentId);
    requireGrant(p, input.duplicateInSameProject ? 'canCreateEnvironments' : 'canCreateProjects');
    if (input.includeServices && input.selectedServices) {
      const present = new Set((await servicesOf(this.db, [environment.id])).map((s) => `${s.type}:${s.id}`));
      const missing = input.selectedServices.filter((s) => !present.has(`${s.type}:${s.id}`));
      if (missing.length) {
        throw Invalid('selectedServices', `not in the source environment: ${missing.map((s) => s.id).join(', ')}`);
      }
    }
    const copy = (trx: Db, to: string) =>
      input.includeServices
        ? copyServices(trx, this.deps.ids, environment.id, to, input.selectedServices)
        : Promise.resolve([]);

    const created = await this.db.transaction().execute(async (trx) => {
      const environmentId = this.deps.ids('env');
      let projectId = project.id;
      if (input.duplicateInSameProject) {
        await this.insertEnvironment(trx, {
          id: environmentId,
          projectId,
          name: input.name,
          description: input.description ?? environment.description,
          env: environment.env,
        });
      } else {
        projectId = this.deps.ids('prj');
        await trx
          .insertInto('projects')
          .values({
            id: projectId,
            organizationId: p.organizationId,
            name: input.name,
            description: input.description ?? project.description,
            env: project.env,
          })
          .execute();
        await this.insertEnvironment(trx, {
          id: environmentId,
          projectId,
          name: environment.name,
          description: environment.description,
          env: environment.env,
        });
      }
      return { projectId, environmentId, serviceIds: await copy(trx, environmentId) };
    });
    await this.identity.grantCreated(p, {
      projects: [created.projectId],
      environments: [created.environmentId],
      services: created.serviceIds,
    });
    return this.one(p, created.projectId);
  }
}
