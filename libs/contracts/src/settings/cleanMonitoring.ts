import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const cleanMonitoring = defineContract({
  method: 'POST',
  summary: 'Delete the stored server and container monitoring data',
  description:
    "Empties the metrics store of one server: the platform host's without `serverId` (platform administrators " +
    "only), or the remote server `serverId` names (its organization's admins).",
  input: z.object({ serverId: z.string().optional() }),
  output: Empty,
  access: { role: 'admin' },
  example: {},
});
