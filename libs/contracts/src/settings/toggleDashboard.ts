import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const toggleDashboard = defineContract({
  method: 'POST',
  summary: 'Turn the reverse-proxy dashboard on or off',
  description:
    'The spec does not show the body fields. `enableDashboard` (optional) sets the state: ' +
    'true exposes the dashboard, false hides it, and when omitted the current state is ' +
    'flipped. `serverId` (optional) picks the remote server; without it the host running the ' +
    'platform is used.',
  input: z.object({
    enableDashboard: z.boolean().optional(),
    serverId: z.string().optional(),
  }),
  output: Empty,
  access: { role: 'admin' },
  example: { enableDashboard: true },
});
