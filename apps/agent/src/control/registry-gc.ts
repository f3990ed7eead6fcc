/**
 * The server registry's share of a host cleanup (host-cleanup.ts): its tags follow the images
 * built here. A tag `<repo>:<tag>` whose local image is gone (removed by this cleanup, an
 * earlier one or the prune after deploys) and that no Skiff service names is deleted, then
 * the registry's garbage collector removes the manifests and layers nothing tags any more.
 * It runs inside the registry's own container on this node (deployments/server-registry.ts),
 * with fixed programs and arguments checked against the registry's own layout; the cleanup
 * holds every build and deploy slot, so no push runs meanwhile.
 */
import type { CleanupEngine, EngineImage } from '../docker/dockerode-cleanup.js';
import { REGISTRY_SERVICE } from '../deployments/server-registry.js';
import { parseImageReference } from '@skiff/domain';

const ROOT = '/var/lib/registry';
const REPOSITORIES = `${ROOT}/docker/registry/v2/repositories`;
const CONFIG = '/run/secrets/config.yml';
const REPO_RE = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;
const TAG_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

const TAGS = '/_manifests/tags/';
const CURRENT = '/current';

/** The repository and tag a `find` line names (`<REPOSITORIES>/<repo>/_manifests/tags/<tag>/current`), or null. */
export function tagOfPath(path: string): { repo: string; tag: string } | null {
  if (!path.startsWith(`${REPOSITORIES}/`) || !path.endsWith(CURRENT)) return null;
  const inner = path.slice(REPOSITORIES.length + 1, -CURRENT.length);
  const at = inner.lastIndexOf(TAGS);
  const repo = inner.slice(0, at);
  const tag = inner.slice(at + TAGS.length);
  return at > 0 && tag.length > 0 && !tag.includes('/') ? { repo, tag } : null;
}

export interface RegistryCollection {
  /** `skiff-registry/<repo>:<tag>` of each deleted tag. */
  removedTags: string[];
  spaceFreed: number;
}

type Engine = Pick<CleanupEngine, 'containers' | 'execIn'>;

export async function collectRegistry(engine: Engine, images: EngineImage[], serviceImages: string[]): Promise<RegistryCollection> {
  const none = { removedTags: [], spaceFreed: 0 };
  const container = (await engine.containers()).find(
    (c) => c.state === 'running' && c.labels['com.docker.swarm.service.name'] === REGISTRY_SERVICE && c.labels['skiff.role'] === 'server-registry',
  );
  if (!container) return none;
  const run = async (argv: string[]) => {
    const r = await engine.execIn(container.id, argv);
    if (r.exitCode !== 0) throw new Error(`${argv.slice(0, 2).join(' ')} in the server registry failed (${r.exitCode}): ${r.output.trim().slice(-500)}`);
    return r.output;
  };
  const listed = await run(['find', REPOSITORIES, '-type', 'd', '-path', '*/_manifests/tags/*/current']);
  const local = new Set(images.flatMap((i) => i.tags));
  const named = new Set(serviceImages.map(repositoryTagOf));
  const gone: Array<{ repo: string; tag: string }> = [];
  for (const line of listed.split('\n')) {
    const tagged = tagOfPath(line.trim());
    if (!tagged || !REPO_RE.test(tagged.repo) || !TAG_RE.test(tagged.tag)) continue;
    const ref = `${tagged.repo}:${tagged.tag}`;
    if (!local.has(ref) && !named.has(ref)) gone.push(tagged);
  }
  if (gone.length === 0) return none;
  const size = async () => Number(/^(\d+)/.exec(await run(['du', '-sk', ROOT]))?.[1] ?? 0) * 1024;
  const before = await size();
  for (const { repo, tag } of gone) await run(['rm', '-rf', `${REPOSITORIES}/${repo}/_manifests/tags/${tag}`]);
  await run(['registry', 'garbage-collect', '--delete-untagged', CONFIG]);
  return { removedTags: gone.map(({ repo, tag }) => `${REGISTRY_SERVICE}/${repo}:${tag}`), spaceFreed: Math.max(0, before - (await size())) };
}

/** `host:port/repo:tag@digest` → `repo:tag`, as the registry's storage names it. */
function repositoryTagOf(ref: string): string {
  const parsed = parseImageReference(ref);
  if (!parsed) return ref.split('@')[0]!;
  return parsed.tag ? `${parsed.path}:${parsed.tag}` : parsed.path;
}
