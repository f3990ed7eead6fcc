import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const reloadProxy = defineContract({
  method: 'POST',
  summary: 'Restart the reverse proxy so it picks up its configuration',
  description:
    'The spec does not show the body fields; `serverId` (optional) picks the remote server ' +
    'whose proxy is restarted, and without it the proxy of the host running the platform is.',
  input: z.object({ serverId: z.string().optional() }),
  output: Empty,
  access: { role: 'admin' },
  example: {},
});
