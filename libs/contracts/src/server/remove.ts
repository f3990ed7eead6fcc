import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ServerRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a server',
  description:
    'While applications, compose stacks or cache instances are recorded on it, refused ' +
    '(BAD_REQUEST naming `serverId`, listing them) unless `workloads` says what becomes of ' +
    'them: `remove` deletes their records (with their domains, deployments and backups) and ' +
    'has the agent remove their services and containers from the machine (volumes are kept); ' +
    '`leaveRunning` deletes their records and leaves the machine running them, unmanaged. ' +
    'Without workloads on it, its agent removes its proxy container (`leaveRunning`: keeps ' +
    'it). The agent, told when it next reports, stops. Certificates recorded for the server ' +
    'go with it; its unfinished commands end failed. Answers the removed record.',
  input: z.object({
    serverId: RequiredId,
    workloads: z
      .enum(['remove', 'leaveRunning'])
      .optional()
      .describe('What becomes of the workloads recorded on the server: removed from the machine, or left running there'),
  }),
  output: ServerRecord,
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example' },
});
