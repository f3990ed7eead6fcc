import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CancelResult } from './cancel-result.js';

export const cancelDeployment = defineContract({
  method: 'POST',
  summary: "Cancel the application's running deployment",
  description:
    "Stops only this application's current job (the deployment at the head of its " +
    "queue: its build, pull or rollout) and ends it `cancelled` with the reason `cancelled by the user`; " +
    'the jobs queued behind it stay queued. The request goes straight to the server\'s agent (it is not ' +
    'queued): an agent that does not answer within 5 s is BAD_REQUEST naming the server. When the ' +
    "rollout had begun, the agent puts the previous version back with the engine's rollback (its tasks " +
    'keep serving); a first deployment leaves no service behind. The application then shows the status ' +
    'it had before this deployment (`done` when the previous version serves, `idle` when nothing was ' +
    'deployed or it was stopped, `error` when the previous deployment failed). A deployment that has not ' +
    'reached the server yet, or that waits there for a deploy slot, is cancelled at once without ' +
    'running. Nothing running or queued is BAD_REQUEST.',
  input: z.object({ applicationId: RequiredId }),
  output: CancelResult,
  example: { applicationId: 'app_example' },
  extension: true,
});
