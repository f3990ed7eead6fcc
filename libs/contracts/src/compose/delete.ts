import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeletedCompose } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete a compose stack with its services, domains and deployments',
  description:
    'A stack that was never deployed is deleted at once. Otherwise the removal of its containers, ' +
    'networks and directory on the server is queued after its other jobs, and the record (with its ' +
    'domains, their routes, its deployments and backups) is deleted when the agent reports them ' +
    'gone; meanwhile new work is refused, and a failed removal leaves the stack in `error` (delete ' +
    'again). Named volumes are kept unless `deleteVolumes` is true; bind-mounted host directories ' +
    'are never removed. Answers the record with `deleteVolumes`.',
  input: z.object({ composeId: RequiredId, deleteVolumes: z.boolean().optional() }),
  output: DeletedCompose,
  access: { grant: 'canDeleteServices' },
  example: { composeId: 'cmp_example', deleteVolumes: false },
});
