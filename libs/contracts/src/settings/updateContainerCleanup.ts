import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostSettingsRecord } from './record.js';

export const updateContainerCleanup = defineContract({
  method: 'POST',
  summary: 'Turn the scheduled daily container cleanup on or off',
  description:
    'Records the choice (off by default) for the platform host, or for the remote server ' +
    '`serverId` names; once a day its agent prunes unused images, stopped containers and ' +
    'build cache (as settings.cleanAll: never volumes, never what a workload uses), after the ' +
    'builds and deploys running there. The platform host needs a platform administrator ' +
    '(FORBIDDEN otherwise) and answers the host settings; a remote server needs an admin of ' +
    'its organization and answers `{serverId, enableContainerCleanup}`.',
  input: z.object({
    enableContainerCleanup: z.boolean(),
    serverId: z.string().optional().describe('A remote server of the organization; absent: the platform host'),
  }),
  output: z.union([
    HostSettingsRecord,
    z.object({ serverId: z.string(), enableContainerCleanup: z.boolean() }),
  ]),
  access: { role: 'admin' },
  example: { enableContainerCleanup: true },
});
