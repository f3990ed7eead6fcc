import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ApplicationRecord } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete an application with its containers, domains and deployments',
  description:
    'Answers the application as it was. One that was never deployed is deleted at once. Otherwise ' +
    "its Swarm service is removed first: the removal joins the application's queue (after the work " +
    "queued before it), and once the server's agent reports the service gone the application is " +
    'deleted with its domains, deployments, previews and backups. Until then it is still listed, ' +
    'further deploys, stops, starts and reloads are BAD_REQUEST, and a repeated delete changes ' +
    'nothing. If the removal fails (or the agent does not run it within a day), the application ' +
    'stays, with `applicationStatus: error`, and can be deleted again.',
  input: z.object({ applicationId: RequiredId }),
  output: ApplicationRecord,
  access: { grant: 'canDeleteServices' },
  example: { applicationId: 'app_example' },
});
