import { waitFor } from '@skiff/testing';
import { docker } from './stack.js';

const lines = (out: string) => [...new Set(out.split('\n').filter(Boolean))];

/**
 * Removes what an end-to-end file's deployments left on the engine: the containers and the
 * images labelled with each application's id (`skiff.id`), tagged or not (an image whose tag
 * was removed while a container still used it stays behind untagged: only its label finds
 * it). Call it once the stack's services are removed (its close()): swarm removes their task
 * containers a moment later, and those still there after `timeoutMs` are removed here.
 */
export async function removeBuiltImages(applicationIds: Iterable<string>, timeoutMs = 30_000): Promise<void> {
  const ids = [...new Set(applicationIds)];
  const containersOf = async (id: string) => lines((await docker(['ps', '-aq', '--filter', `label=skiff.id=${id}`])).out);
  const left = async () => (await Promise.all(ids.map(containersOf))).flat();
  await waitFor(async () => (await left()).length === 0, { timeoutMs, intervalMs: 250, what: 'the applications\' containers to go' }).catch(async () => {
    const containers = await left();
    if (containers.length > 0) await docker(['rm', '-f', ...containers]);
  });
  for (const id of ids) {
    const images = lines((await docker(['image', 'ls', '-q', '--filter', `label=skiff.id=${id}`])).out);
    if (images.length > 0) await docker(['image', 'rm', '-f', ...images]);
  }
}
