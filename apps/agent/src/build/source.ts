/**
 * Fetching an application's source into a build's work directory: a git repository
 * (git-source.ts) or an uploaded archive (archive-source.ts).
 */
import type { Resolver } from '@skiff/outbound';
import type { BuildSource } from '@skiff/proto';
import type { ArchiveFetcher } from '../reports/artifacts.js';
import { fetchArchiveSource } from './archive-source.js';
import { BuildError } from './errors.js';
import { fetchGitSource } from './git-source.js';

export interface SourceContext {
  /** Aborts when the command is abandoned or cancelled: stop at once (kill what runs). */
  signal: AbortSignal;
  /** The fetch must have finished by this instant (epoch ms). */
  deadline: number;
  /** Adds lines to the deployment's log (the caller scrubs nothing: never pass secrets). */
  log: (...lines: string[]) => Promise<void>;
  deploymentId: string;
  /**
   * The agent's data directory (git keeps the known SSH host keys there, `known_hosts`).
   * Absent in contexts that need none.
   */
  dataDir?: string;
  /** A private directory (0700) for files the fetch needs for its duration (an SSH key). */
  privateDir?: string;
  /** Downloads uploaded archives from the control plane (AgentArtifacts); needed by archive sources. */
  artifacts?: ArchiveFetcher;
  /** Resolves git hosts before they are checked and pinned; default the system resolver. */
  resolver?: Resolver;
}

/** Fetches `source` into the empty directory `dir`. Throws BuildError, or AbandonedError on abort. */
export async function fetchSource(source: BuildSource, dir: string, ctx: SourceContext): Promise<void> {
  switch (source.kind?.$case) {
    case 'git':
      return fetchGitSource(source.kind.value, dir, ctx);
    case 'archive':
      return fetchArchiveSource(source.kind.value, dir, ctx);
    default:
      throw new BuildError('the command names no source to build (git or archive)');
  }
}
