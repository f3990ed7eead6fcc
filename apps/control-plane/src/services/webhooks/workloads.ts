import type { Application, Db, ForgeKind } from '@skiff/db';
import type { DeploySettings } from './decide.js';
import type { ForgeEvent } from './payloads.js';

export type WorkloadKind = 'application' | 'compose';

/** The source columns push-to-deploy reads (applications and compose stacks share them). */
type SourceRow = Pick<
  Application,
  | 'id' | 'sourceType' | 'branch' | 'owner' | 'repository' | 'forgeAId' | 'triggerType'
  | 'forgeBBranch' | 'forgeBOwner' | 'forgeBRepository' | 'forgeBPathNamespace' | 'forgeBProjectId'
  | 'forgeCBranch' | 'forgeCOwner' | 'forgeCRepository' | 'forgeCRepositorySlug'
  | 'forgeDBranch' | 'forgeDOwner' | 'forgeDRepository'
  | 'customGitBranch' | 'autoDeploy' | 'watchPaths' | 'refreshToken' | 'environmentId'
>;

export interface WebhookWorkload {
  kind: WorkloadKind;
  row: SourceRow;
}

const TABLE = { application: 'applications', compose: 'composeStacks' } as const;

const same = (a: string | null | undefined, b: string | null | undefined) => !!a && !!b && a.toLowerCase() === b.toLowerCase();
const path = (...parts: Array<string | null | undefined>) => (parts.every(Boolean) ? parts.join('/') : null);

/** Whether a workload of `kind`'s forge builds the repository the event names. */
export function buildsRepository(kind: ForgeKind, row: SourceRow, e: ForgeEvent): boolean {
  switch (kind) {
    case 'forgeA':
      return same(path(row.owner, row.repository), e.repository);
    case 'forgeB':
      return (
        (e.projectId !== null && row.forgeBProjectId !== null && String(row.forgeBProjectId) === e.projectId) ||
        same(row.forgeBPathNamespace, e.repository) ||
        same(path(row.forgeBOwner, row.forgeBRepository), e.repository)
      );
    case 'forgeC':
      return same(path(row.forgeCOwner, row.forgeCRepositorySlug ?? row.forgeCRepository), e.repository);
    case 'forgeD':
      return same(path(row.forgeDOwner, row.forgeDRepository), e.repository);
  }
}

/** The push-to-deploy settings of a workload, by its source type. */
export function deploySettingsOf(row: SourceRow): DeploySettings {
  const branch: Record<string, string | null> = {
    forgeA: row.branch,
    forgeB: row.forgeBBranch,
    forgeC: row.forgeCBranch,
    forgeD: row.forgeDBranch,
    git: row.customGitBranch,
  };
  return {
    autoDeploy: row.autoDeploy,
    branch: branch[row.sourceType] ?? null,
    triggerType: row.triggerType === 'tag' ? 'tag' : 'push',
    watchPaths: row.watchPaths,
  };
}

/** Applications and compose stacks whose source is that forge. */
export async function workloadsOfForge(db: Db, kind: ForgeKind): Promise<WebhookWorkload[]> {
  const out: WebhookWorkload[] = [];
  for (const wk of ['application', 'compose'] as const) {
    const rows = (await db.selectFrom(TABLE[wk] as 'applications').selectAll().where('sourceType', '=', kind).execute()) as SourceRow[];
    out.push(...rows.map((row) => ({ kind: wk, row })));
  }
  return out;
}

export async function workloadById(db: Db, kind: WorkloadKind, id: string): Promise<WebhookWorkload | null> {
  const row = (await db.selectFrom(TABLE[kind] as 'applications').selectAll().where('id', '=', id).executeTakeFirst()) as
    | SourceRow
    | undefined;
  return row ? { kind, row } : null;
}

/** The organization a workload belongs to (through its environment and project). */
export async function organizationOf(db: Db, environmentId: string): Promise<string> {
  const { organizationId } = await db
    .selectFrom('environments')
    .innerJoin('projects', 'projects.id', 'environments.projectId')
    .select('projects.organizationId')
    .where('environments.id', '=', environmentId)
    .executeTakeFirstOrThrow();
  return organizationId;
}
