import { z } from 'zod';
import { defineContract } from '../contract.js';

export const updateServer = defineContract({
  method: 'POST',
  summary: 'Update the agents of every server to the platform version',
  description:
    "Tells the agents of all servers, one after another, to restart on the control plane's " +
    'version: an agent already on it is left alone; one that is not downloads the agent program ' +
    'the control plane offers (checked by its SHA-256), puts it in place of its own, ends its ' +
    'running commands cleanly, keeps its journal, and exits with the restart status for its ' +
    'supervisor (tools/up for the platform host) to start it again. The next server is asked once ' +
    'the previous agent answers again. The control plane itself ' +
    'is updated by installing the new version and calling settings.reloadServer (see `controlPlane` ' +
    'in the answer and the README). Platform administrators only.',
  input: z.object({}),
  output: z.object({
    version: z.string().describe('The version the agents are brought to'),
    agents: z.array(
      z.object({
        serverId: z.string(),
        status: z
          .enum(['updated', 'current', 'stillOld', 'unreachable'])
          .describe('updated: restarted and answers the new version; current: already on it; stillOld: restarted on the same program (install the new one there); unreachable: could not be asked or did not come back'),
        detail: z.string().describe('What the agent said, or why it could not be asked'),
      }),
    ),
    controlPlane: z.string().describe('How the control plane itself is updated'),
  }),
  access: { role: 'admin' },
  example: {},
});
