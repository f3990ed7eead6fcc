import { z } from 'zod';
import { defineContract } from '../contract.js';

/** What one container-engine cleanup removed (`settings.clean*`, and the containerCleanup event). */
export const CleanupResult = z.object({
  serverId: z.string().describe('The server cleaned: a server id, or `local` for the platform host'),
  removedContainers: z.array(z.string()).describe('Names of the stopped containers removed'),
  removedImages: z.array(z.string()).describe('Ids of the images removed'),
  removedVolumes: z.array(z.string()).describe('Names of the volumes removed'),
  spaceFreed: z.number().int().min(0).describe('Bytes freed, as the engine reports the removed objects and build cache'),
  waitedMs: z.number().int().min(0).describe('How long the cleanup waited for running builds and deploys to end'),
});

/**
 * A container-engine cleanup (`settings.clean*`): on the platform host (no `serverId`) for a
 * platform administrator; on the remote server `serverId` names for its organization's admins.
 */
export function cleanupContract(summary: string) {
  return defineContract({
    method: 'POST',
    summary,
    description:
      '`serverId` (optional) picks the remote server to clean, and without it the host running ' +
      'the platform is cleaned (platform administrators only; another server: an admin of its ' +
      'organization). The server\'s agent waits until no build or deploy runs there and starts ' +
      'none while it cleans. Never removed: a volume any Skiff workload names (stopped ones ' +
      'included; only `cleanUnusedVolumes` removes volumes at all), an image a workload\'s ' +
      'current or previous deployment uses, a stopped container of a stopped workload. Answers ' +
      'what was removed and the space freed.',
    input: z.object({ serverId: z.string().optional() }),
    output: CleanupResult,
    access: { role: 'admin' },
    example: { serverId: 'srv_example' },
  });
}
