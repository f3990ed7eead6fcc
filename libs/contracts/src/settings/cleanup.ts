import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

/**
 * A container-engine cleanup (`settings.clean*`): admin only, on the platform host or on the
 * remote server `serverId` names; answers `{}`.
 */
export function cleanupContract(summary: string) {
  return defineContract({
    method: 'POST',
    summary,
    description:
      '`serverId` (optional) picks the remote server to ' +
      'clean, and without it the host running the platform is cleaned.',
    input: z.object({ serverId: z.string().optional() }),
    output: Empty,
    access: { role: 'admin' },
    example: { serverId: 'srv_example' },
  });
}
