/**
 * Fetching a stack's source into its `.incoming/` directory (stack-dir.ts): the raw compose
 * text written as the compose file, or a shallow clone of a git branch (build/git-source.ts:
 * the same URL checks, SSH key handling and log scrubbing as application builds). Answers
 * where the compose file is, checked to stay inside the source (no `..`, no link out).
 */
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { DeployCompose } from '@skiff/proto';
import { fetchGitSource } from '../build/git-source.js';
import { resolveInside, SourcePathError } from '../build/paths.js';
import { ComposeRunError } from './cli.js';
import { DEFAULT_COMPOSE_PATH, type StackDir } from './stack-dir.js';

export interface FetchedSource {
  /** The real path of `.incoming/`. */
  root: string;
  /** The compose file's path inside the source, `/`-separated. */
  composePath: string;
}

export interface FetchContext {
  signal: AbortSignal;
  deadline: number;
  log: (...lines: string[]) => Promise<void>;
  deploymentId: string;
  dataDir: string;
}

/** The compose path as the command gives it, cleaned (`./x.yml` → `x.yml`); null when it leaves the source. */
export function cleanComposePath(path: string): string | null {
  const segments = path.trim().replace(/\\/g, '/').split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return null;
  return segments.length === 0 ? DEFAULT_COMPOSE_PATH : segments.join('/');
}

export async function fetchStackSource(deploy: DeployCompose, dir: StackDir, ctx: FetchContext): Promise<FetchedSource> {
  const composePath = cleanComposePath(deploy.composePath);
  if (composePath === null) throw new ComposeRunError(`compose path "${deploy.composePath}" must stay inside the source (no ..)`);
  const source = deploy.source?.kind;
  if (source?.$case === 'git') {
    await fetchGitSource(source.value, dir.incoming, { ...ctx, privateDir: dir.private });
  } else if (!source) {
    const file = join(dir.incoming, ...composePath.split('/'));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, deploy.composeText, { mode: 0o644 });
    await ctx.log(`Wrote the compose file (${Buffer.byteLength(deploy.composeText)} bytes) as ${composePath}`);
  } else {
    throw new ComposeRunError('a compose stack comes from raw compose text or a git repository');
  }
  const root = await realpath(dir.incoming);
  try {
    const file = await resolveInside(root, root, composePath, { setting: 'compose path', kind: 'file' });
    return { root, composePath: relative(root, file).split(sep).join('/') };
  } catch (err) {
    if (err instanceof SourcePathError) throw new ComposeRunError(err.message);
    throw err;
  }
}
