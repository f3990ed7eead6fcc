import type { ForgeKind, Project, SourceColumns } from '@skiff/db';

type Column = keyof SourceColumns;
import type { BuildSource, GitSource } from '@skiff/proto';
import { Invalid } from '../../errors.js';
import type { ForgeRepositories } from '../forges/forge-repositories.js';
import type { ServiceDeps } from '../shared/deps.js';

/** Forge source types: built from a forge connection's repository with a login minted per deploy. */
export const FORGE_SOURCES = new Set<string>(['forgeA', 'forgeB', 'forgeC', 'forgeD']);
export const isForgeSource = (sourceType: string): sourceType is ForgeKind => FORGE_SOURCES.has(sourceType);

/** Which columns of a service hold each forge's connection, repository and branch, and the operation that saves them. */
interface ForgeColumns {
  id: Column;
  owner: Column;
  repo: Column;
  branch: Column;
  savedWith: string;
}

const COLUMNS: Record<ForgeKind, ForgeColumns> = {
  forgeA: { id: 'forgeAId', owner: 'owner', repo: 'repository', branch: 'branch', savedWith: 'saveForgeAProvider' },
  forgeB: { id: 'forgeBId', owner: 'forgeBOwner', repo: 'forgeBRepository', branch: 'forgeBBranch', savedWith: 'saveForgeBProvider' },
  forgeC: { id: 'forgeCId', owner: 'forgeCOwner', repo: 'forgeCRepositorySlug', branch: 'forgeCBranch', savedWith: 'saveForgeCProvider' },
  forgeD: { id: 'forgeDId', owner: 'forgeDOwner', repo: 'forgeDRepository', branch: 'forgeDBranch', savedWith: 'saveForgeDProvider' },
};

/** What a forge source names: the connection, the repository and the branch (or tag). */
export interface ForgeSourceSettings {
  kind: ForgeKind;
  forgeId: string;
  owner: string;
  repo: string;
  branch: string;
  /** The column naming the connection (the field a refusal names). */
  field: Column;
}

/** The column holding each forge's branch: a preview sets the pull request's branch there. */
export const forgeBranchColumn = (kind: ForgeKind): 'branch' | 'forgeBBranch' | 'forgeCBranch' | 'forgeDBranch' =>
  COLUMNS[kind].branch as 'branch' | 'forgeBBranch' | 'forgeCBranch' | 'forgeDBranch';

/**
 * A forge source's settings, read without asking the forge (so a webhook can refuse a workload
 * that cannot deploy before answering). A missing setting is bad input naming its column
 * (`router`: application or compose).
 */
export function forgeSourceSettings(row: { sourceType: string; forgeBProjectId: number | null }, router: 'application' | 'compose'): ForgeSourceSettings {
  const kind = row.sourceType as ForgeKind;
  const c = COLUMNS[kind];
  const saved = `${router}.${c.savedWith}`;
  const value = (column: Column) => {
    const v = (row as unknown as Record<string, unknown>)[column];
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
  };
  const forgeId = value(c.id);
  if (!forgeId) throw Invalid(c.id, `no ${kind} connection set (${saved})`);
  // GitLab: the numeric project id names the project when owner/repository are not set.
  const projectId = kind === 'forgeB' && row.forgeBProjectId !== null ? String(row.forgeBProjectId) : null;
  const owner = value(c.owner) ?? (projectId ? '' : null);
  const repo = value(c.repo) ?? (kind === 'forgeC' ? value('forgeCRepository') : null) ?? projectId;
  if (owner === null) throw Invalid(c.owner, `no repository owner set (${saved})`);
  if (!repo) throw Invalid(c.repo, `no repository set (${saved})`);
  const branch = value(c.branch);
  if (!branch) throw Invalid(c.branch, `no branch set (${saved})`);
  return { kind, forgeId, owner, repo, branch, field: c.id };
}

/**
 * A service's forge source as the agent clones it: the clone address the forge gives for the
 * repository, the branch (or tag), submodules, and a login minted for this deploy (a GitHub
 * App installation token, or the connection's token). The login travels in the signed command,
 * sealed at rest like every command secret, and reaches git through its environment only.
 * A missing setting is bad input naming its column (`router`: application or compose).
 */
export async function forgeGitSource(
  deps: Pick<ServiceDeps, 'outbound'>,
  forges: ForgeRepositories | undefined,
  located: { row: { sourceType: string; enableSubmodules: boolean | null; forgeBProjectId: number | null }; project: Project },
  router: 'application' | 'compose',
): Promise<BuildSource & { kind: { $case: 'git'; value: GitSource } }> {
  const { row, project } = located;
  const s = forgeSourceSettings(row, router);
  if (!forges) throw Invalid('sourceType', `deploying from ${s.kind} is not available in this process`);
  const login = await forges.cloneLogin(project.organizationId, s.kind, s.forgeId, s.owner, s.repo, s.field);
  return {
    kind: {
      $case: 'git',
      value: {
        url: login.url,
        branch: s.branch,
        submodules: row.enableSubmodules ?? false,
        sshPrivateKey: '',
        outbound: { allowPrivate: deps.outbound?.allowPrivate ?? false },
        httpUsername: login.username,
        httpPassword: login.password,
        commit: '',
      },
    },
  };
}

/** The build path column of an application's forge source. */
export const FORGE_BUILD_PATHS = { forgeA: 'buildPath', forgeB: 'forgeBBuildPath', forgeC: 'forgeCBuildPath', forgeD: 'forgeDBuildPath' } as const;
