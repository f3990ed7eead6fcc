import type { Project } from '@skiff/db';
import type { BuildSource, GitSource } from '@skiff/proto';
import { Invalid } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';

/** The plain git settings a service (an application or a compose stack) keeps. */
export interface PlainGitColumns {
  customGitUrl: string | null;
  customGitBranch: string | null;
  customGitSSHKeyId: string | null;
  enableSubmodules: boolean | null;
}

/**
 * The service's plain git source as the agent (or the control plane, fetching a compose file)
 * clones it: URL, branch, submodules, the opened private key of its SSH key, and the
 * operator's outbound policy (which addresses the clone may reach). A missing URL
 * or branch is bad input naming it (`savedWith`: the operation that sets them); an SSH key that
 * is gone, or another organization's, names `customGitSSHKeyId`.
 */
export async function plainGitSource(
  deps: Pick<ServiceDeps, 'db' | 'secrets' | 'outbound'>,
  located: { row: PlainGitColumns; project: Project },
  savedWith: string,
): Promise<BuildSource & { kind: { $case: 'git'; value: GitSource } }> {
  const { row } = located;
  if (!row.customGitUrl) throw Invalid('customGitUrl', `no git repository set (${savedWith})`);
  if (!row.customGitBranch) throw Invalid('customGitBranch', `no branch set (${savedWith})`);
  return {
    kind: {
      $case: 'git',
      value: {
        url: row.customGitUrl,
        branch: row.customGitBranch,
        submodules: row.enableSubmodules ?? false,
        sshPrivateKey: await sshPrivateKey(deps, located),
        outbound: { allowPrivate: deps.outbound?.allowPrivate ?? false },
        httpUsername: '',
        httpPassword: '',
        commit: '',
      },
    },
  };
}

/** The opened private key of the service's SSH key, or '' when it has none. */
async function sshPrivateKey(deps: Pick<ServiceDeps, 'db' | 'secrets'>, { row, project }: { row: PlainGitColumns; project: Project }): Promise<string> {
  if (!row.customGitSSHKeyId) return '';
  const key = await deps.db.selectFrom('sshKeys').select(['organizationId', 'privateKey']).where('id', '=', row.customGitSSHKeyId).executeTakeFirst();
  if (!key || key.organizationId !== project.organizationId) throw Invalid('customGitSSHKeyId', 'the SSH key no longer exists');
  return deps.secrets.open(key.privateKey);
}
