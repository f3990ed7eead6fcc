import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ApplicationRecord } from './record.js';

export const DeletedApplication = ApplicationRecord.extend({
  deleteVolumes: z.boolean().describe('Whether the named volumes of its mounts are removed with it'),
  keptVolumes: z
    .array(z.string())
    .describe('The named volumes of its mounts left on the server (empty with `deleteVolumes`)'),
});

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete an application with its containers, domains and deployments',
  description:
    'Answers the application as it was. One that was never deployed is deleted at once. Otherwise ' +
    "its Swarm service is removed first: the removal joins the application's queue (after the work " +
    "queued before it), and once the server's agent reports the service gone the application is " +
    'deleted with its domains, deployments, previews, mounts and backups. Until then it is still listed, ' +
    'further deploys, stops, starts and reloads are BAD_REQUEST, and a repeated delete changes ' +
    'nothing. If the removal fails (or the agent does not run it within a day), the application ' +
    'stays, with `applicationStatus: error`, and can be deleted again. The named ' +
    'volumes of its mounts (`mounts.*`) are kept, and named in `keptVolumes`, unless `deleteVolumes` ' +
    'is true; the files of its file mounts always go; bind-mounted host paths are never touched.',
  input: z.object({ applicationId: RequiredId, deleteVolumes: z.boolean().optional() }),
  output: DeletedApplication,
  access: { grant: 'canDeleteServices' },
  example: { applicationId: 'app_example', deleteVolumes: false },
});
