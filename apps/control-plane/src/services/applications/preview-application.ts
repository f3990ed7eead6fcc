import type { Application, PreviewDeployment } from '@skiff/db';
import { forgeBranchColumn, isForgeSource } from '../deployments/forge-sources.js';

/**
 * The application a preview runs: its parent's build settings with the pull request's branch,
 * the preview's own name and id (its Swarm service and labels, so removing it touches nothing
 * of the parent's), `previewEnv`, `previewBuildArgs` and `previewBuildSecrets` instead of the
 * parent's, one replica, no mounts of the parent's (they are keyed by the id), no rollback.
 */
export function previewApplication(parent: Application, preview: Pick<PreviewDeployment, 'id' | 'appName' | 'branch'>): Application {
  const branch = isForgeSource(parent.sourceType) ? { [forgeBranchColumn(parent.sourceType)]: preview.branch } : { customGitBranch: preview.branch };
  return {
    ...parent,
    ...branch,
    id: preview.id,
    appName: preview.appName,
    env: parent.previewEnv ?? '',
    buildArgs: parent.previewBuildArgs,
    buildSecrets: parent.previewBuildSecrets,
    replicas: 1,
    modeCluster: null,
    rollbackActive: false,
    autoDeploy: false,
    isPreviewDeploymentsActive: false,
  };
}

/** A full hex object name (SHA-1 or SHA-256) a deploy may pin, lowercased; null for anything else (the branch's head is built). */
export function buildableCommit(sha: string | null | undefined): string | null {
  const lower = sha?.toLowerCase() ?? '';
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(lower) ? lower : null;
}

const originOf = (url: string): string | null => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

/**
 * The git source of a preview whose pull request comes from a fork: the fork's clone address,
 * with the base repository's login only when the fork is on the same forge host (same scheme,
 * host and port as the base's clone address). Another host never gets it.
 */
export function forkGitSource<T extends { url: string; httpUsername: string; httpPassword: string; sshPrivateKey: string }>(base: T, forkUrl: string): T {
  const sameHost = originOf(forkUrl) !== null && originOf(forkUrl) === originOf(base.url);
  return sameHost ? { ...base, url: forkUrl, sshPrivateKey: '' } : { ...base, url: forkUrl, httpUsername: '', httpPassword: '', sshPrivateKey: '' };
}
